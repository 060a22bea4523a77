/// A step that prepares a tensor's values or reads them: normalization, score calibration and
/// thresholds, tokenizers.
public struct TFLiteProcessUnit: Sendable, Hashable, Codable {
    /// What the step does.
    public enum Options: Sendable, Hashable {
        /// `(value - mean) / std`, per channel or for all channels.
        case normalization(mean: [Float], std: [Float])
        /// Scores are calibrated with parameters in an associated file.
        case scoreCalibration(transformation: String, defaultScore: Float)
        /// Results below this score are dropped.
        case scoreThresholding(globalScoreThreshold: Float)
        case bertTokenizer(vocabFiles: [TFLiteAssociatedFile])
        case sentencePieceTokenizer(modelFiles: [TFLiteAssociatedFile], vocabFiles: [TFLiteAssociatedFile])
        case regexTokenizer(delimiterPattern: String?, vocabFiles: [TFLiteAssociatedFile])
        /// A kind this reader does not know (from a newer schema), by its union type.
        case other(String)
    }

    /// What the step does; `nil` when the unit names none.
    public var options: Options?

    public init(options: Options?) { self.options = options }

    /// The associated files the step names (tokenizer vocabularies).
    public var associatedFiles: [TFLiteAssociatedFile] {
        switch options {
        case .bertTokenizer(let vocab): vocab
        case .sentencePieceTokenizer(let model, let vocab): model + vocab
        case .regexTokenizer(_, let vocab): vocab
        default: []
        }
    }

    /// The numbers the step holds (means, deviations, scores).
    var numbers: [Float] {
        switch options {
        case .normalization(let mean, let std): mean + std
        case .scoreCalibration(_, let defaultScore): [defaultScore]
        case .scoreThresholding(let threshold): [threshold]
        default: []
        }
    }

    private enum CodingKeys: String, CodingKey {
        case type = "options_type", options
    }

    private enum OptionKeys: String, CodingKey {
        case mean, std, scoreTransformation = "score_transformation", defaultScore = "default_score"
        case globalScoreThreshold = "global_score_threshold", vocabFile = "vocab_file"
        case sentencePieceModel = "sentencePiece_model", delimRegexPattern = "delim_regex_pattern"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let type = try container.decodeIfPresent(String.self, forKey: .type) else {
            options = nil
            return
        }
        let values = try? container.nestedContainer(keyedBy: OptionKeys.self, forKey: .options)
        func files(_ key: OptionKeys) throws -> [TFLiteAssociatedFile] {
            try values?.decodeIfPresent([TFLiteAssociatedFile].self, forKey: key) ?? []
        }
        switch type {
        case "NormalizationOptions":
            options = .normalization(
                mean: try values?.decodeIfPresent([Float].self, forKey: .mean) ?? [],
                std: try values?.decodeIfPresent([Float].self, forKey: .std) ?? [])
        case "ScoreCalibrationOptions":
            options = .scoreCalibration(
                transformation: try values?.decodeIfPresent(String.self, forKey: .scoreTransformation) ?? "IDENTITY",
                defaultScore: try values?.decodeIfPresent(Float.self, forKey: .defaultScore) ?? 0)
        case "ScoreThresholdingOptions":
            options = .scoreThresholding(globalScoreThreshold: try values?.decodeIfPresent(Float.self, forKey: .globalScoreThreshold) ?? 0)
        case "BertTokenizerOptions": options = .bertTokenizer(vocabFiles: try files(.vocabFile))
        case "SentencePieceTokenizerOptions":
            options = .sentencePieceTokenizer(modelFiles: try files(.sentencePieceModel), vocabFiles: try files(.vocabFile))
        case "RegexTokenizerOptions":
            options = .regexTokenizer(
                delimiterPattern: try values?.decodeIfPresent(String.self, forKey: .delimRegexPattern),
                vocabFiles: try files(.vocabFile))
        default: options = .other(type)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        func values(_ type: String) throws -> KeyedEncodingContainer<OptionKeys> {
            try container.encode(type, forKey: .type)
            return container.nestedContainer(keyedBy: OptionKeys.self, forKey: .options)
        }
        switch options {
        case nil: return
        case .normalization(let mean, let std):
            var options = try values("NormalizationOptions")
            try options.encode(mean, forKey: .mean)
            try options.encode(std, forKey: .std)
        case .scoreCalibration(let transformation, let defaultScore):
            var options = try values("ScoreCalibrationOptions")
            try options.encode(transformation, forKey: .scoreTransformation)
            try options.encode(defaultScore, forKey: .defaultScore)
        case .scoreThresholding(let threshold):
            var options = try values("ScoreThresholdingOptions")
            try options.encode(threshold, forKey: .globalScoreThreshold)
        case .bertTokenizer(let vocab):
            var options = try values("BertTokenizerOptions")
            try options.encode(vocab, forKey: .vocabFile)
        case .sentencePieceTokenizer(let model, let vocab):
            var options = try values("SentencePieceTokenizerOptions")
            try options.encode(model, forKey: .sentencePieceModel)
            try options.encode(vocab, forKey: .vocabFile)
        case .regexTokenizer(let pattern, let vocab):
            var options = try values("RegexTokenizerOptions")
            try options.encodeIfPresent(pattern, forKey: .delimRegexPattern)
            try options.encode(vocab, forKey: .vocabFile)
        case .other(let type):
            try container.encode(type, forKey: .type)
        }
    }
}
