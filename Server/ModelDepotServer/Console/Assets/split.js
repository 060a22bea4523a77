"use strict";
// The rule editor's split: a slider beside each share's number, kept equal, and the total,
// flagged when it is not 100%. Without this script the numbers alone work the same.
(function () {
  const editor = document.getElementById("rule-editor");
  if (!editor) return;
  const total = document.getElementById("split-total");
  const numbers = Array.from(editor.querySelectorAll("input[type=number][name^='share-']"));

  function basisPoints(text) {
    const value = Number(text || "0");
    return Number.isFinite(value) ? Math.round(value * 100) : NaN;
  }

  function update() {
    const sum = numbers.reduce(function (acc, input) { return acc + basisPoints(input.value); }, 0);
    const text = Number.isNaN(sum) ? "not a number" : (sum / 100).toFixed(2) + "%";
    total.value = sum === 10000 ? text : text + ": the shares must add up to 100%";
    total.className = sum === 10000 ? "" : "total-bad";
  }

  editor.querySelectorAll("input.share-slider").forEach(function (slider) {
    const number = document.getElementById(slider.dataset.for);
    slider.hidden = false;
    slider.addEventListener("input", function () {
      number.value = slider.value;
      update();
    });
    number.addEventListener("input", function () {
      slider.value = number.value;
      update();
    });
  });
  update();
})();
