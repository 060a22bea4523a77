import ModelDepotShared

extension OutcomeRecorder {
    /// Loads a model into an interpreter, recording `load_succeeded` or `load_failed` with the
    /// error's code (`unavailable` for an interpreter's own error type): how every runner reports
    /// its loads, whichever interpreter it wraps.
    /// - Parameters:
    ///   - model: The model loaded.
    ///   - load: The load.
    /// - Returns: What `load` returns.
    /// - Throws: What `load` throws.
    public func recordingLoad<Result, Failure: Error>(of model: VerifiedModel, _ load: () throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        do {
            let result = try load()
            record(.loadSucceeded, for: model)
            return result
        } catch {
            record(.loadFailed, code: Self.code(of: error), for: model)
            throw error
        }
    }

    /// Runs a model once, recording `inferences` and `inference_latency_ms`, or `inference_failed`
    /// with the error's code.
    /// - Parameters:
    ///   - model: The model run.
    ///   - run: The run.
    /// - Returns: What `run` returns.
    /// - Throws: What `run` throws.
    public func recordingRun<Result, Failure: Error>(of model: VerifiedModel, _ run: () throws(Failure) -> Result) throws(Failure) -> Result
    {
        let start = ContinuousClock.now
        do {
            let result = try run()
            record(.inferences, for: model)
            record(.inferenceLatency, value: start.duration(to: .now).seconds * 1_000, for: model)
            return result
        } catch {
            record(.inferenceFailed, code: Self.code(of: error), for: model)
            throw error
        }
    }

    private static func code(of error: any Error) -> DepotError.Code {
        (error as? DepotError)?.code ?? .unavailable
    }
}
