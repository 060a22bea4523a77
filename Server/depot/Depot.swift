import ArgumentParser

/// `depot`: the ModelDepot command line.
@main
struct Depot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depot",
        abstract: "ModelDepot: host, verify and roll out TensorFlow Lite models.",
        subcommands: [Inspect.self]
    )
}
