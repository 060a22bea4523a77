"use strict";
// Streams a .tflite file (picked or dropped) to /console/models/{name}/versions with a progress
// bar, and shows the stored version or the server's error (the verifier's included).
(function () {
  const form = document.getElementById("upload");
  if (!form) return;
  const input = document.getElementById("upload-file");
  const zone = document.getElementById("drop-zone");
  const progress = document.getElementById("upload-progress");
  const percent = document.getElementById("upload-percent");
  const status = document.getElementById("upload-status");
  const submit = form.querySelector("button[type=submit]");

  // kind: "error", "done" (stored) or "" (on the way).
  function show(text, kind, link) {
    status.textContent = text;
    status.className = kind;
    if (link) {
      const anchor = document.createElement("a");
      anchor.href = link.href;
      anchor.textContent = link.text;
      status.append(" ", anchor);
    }
  }

  function setProgress(value) {
    progress.value = value;
    percent.textContent = value + "%";
  }

  zone.addEventListener("dragover", function (event) {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", function () { zone.classList.remove("over"); });
  zone.addEventListener("drop", function (event) {
    event.preventDefault();
    zone.classList.remove("over");
    if (event.dataTransfer.files.length === 0) return;
    input.files = event.dataTransfer.files;
    const file = input.files[0];
    show("Ready to upload " + file.name + " (" + file.size + " bytes).", "");
  });

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const file = input.files[0];
    if (!file) {
      show("Choose a .tflite file, or drop one on the field, first.", "error");
      return;
    }
    const maximum = Number(form.dataset.maximumSize);
    if (file.size > maximum) {
      show(file.name + " has " + file.size + " bytes; this server accepts at most " + maximum +
           " (depot serve --max-upload-size). Nothing was sent.", "error");
      return;
    }
    const query = [];
    if (form.elements.notes.value) query.push("notes=" + encodeURIComponent(form.elements.notes.value));
    if (form.elements.publish.checked) query.push("publish=true");
    const request = new XMLHttpRequest();
    request.open("POST", form.action + (query.length ? "?" + query.join("&") : ""));
    request.setRequestHeader("X-Depot-CSRF", form.elements.csrf.value);
    request.setRequestHeader("Content-Type", "application/octet-stream");
    request.setRequestHeader("Depot-Content-Length", String(file.size));
    submit.disabled = true;
    setProgress(0);
    show("Uploading " + file.name + "…", "");
    request.upload.addEventListener("progress", function (progressEvent) {
      if (progressEvent.lengthComputable) setProgress(Math.floor(progressEvent.loaded * 100 / progressEvent.total));
    });
    request.addEventListener("load", function () {
      let body = null;
      try { body = JSON.parse(request.responseText); } catch (ignored) { body = null; }
      if (request.status === 201 && body && body.version) {
        setProgress(100);
        show("Uploaded v" + body.version + " (" + body.size + " bytes, SHA-256 " + body.sha256.slice(0, 12) + "…): verified and stored.",
             "done", { href: window.location.pathname, text: "Show it in the list" });
      } else {
        setProgress(0);
        show(body && body.error ? body.error.message + " [" + body.error.code + "]"
                                : "The upload failed with HTTP " + request.status + "; nothing was stored.", "error");
      }
    });
    request.addEventListener("error", function () {
      setProgress(0);
      show("The upload was cut off by a network error; nothing was stored. Try again.", "error");
    });
    request.addEventListener("abort", function () {
      setProgress(0);
      show("The upload was stopped; nothing was stored.", "error");
    });
    request.addEventListener("loadend", function () { submit.disabled = false; });
    request.send(file);
  });
})();
