import ArgumentParser
import Foundation
import ModelDepotShared

extension Depot {
    /// `depot import firebase`.
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import models from another host.",
            discussion: """
                Examples:
                  depot import firebase hosted_models --models models.json --dry-run
                  depot import firebase hosted_models --models models.json
                """,
            subcommands: [Firebase.self]
        )

        struct Firebase: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Import Firebase ML custom models: each becomes a model whose version 1 is its file, as devices got it.",
                discussion: """
                    Examples:
                      depot import firebase hosted_models --dry-run
                      depot import firebase hosted_models --models models.json
                      depot import firebase --models exported/models.json

                    FOLDER is what the Firebase console's bulk download wrote (hosted_models: one <display name>.tflite \
                    per model). --models names the Firebase ML API's Model resources saved as JSON (the answer of \
                    projects.models.list, a list of Model, or one): then only the models it lists are imported, with \
                    their tags and published state, each from <displayName>.tflite in FOLDER (or the file its \
                    tfliteModel.gcsTfliteUri names; FOLDER defaults to the JSON's folder). Without --models, every \
                    .tflite file is a published model named after the file.

                    Each model is created under its display name in lower case, with its tags; its file is verified \
                    here and by the server, and uploaded as version 1; a published model is published and made the \
                    rollout's default, so devices get exactly the file they got from Firebase. A model that exists \
                    with that file already is left as it is, so running the import again changes nothing. A file \
                    that fails verification, or a model that exists with other files, is reported and nothing of it \
                    is kept. Exit status 1 when any model was not imported.
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The bulk download's folder (hosted_models).") var folder: String?
            @Option(help: ArgumentHelp("Firebase ML Model resources saved as JSON.", valueName: "file")) var models: String?
            @Flag(help: "Check every file and say what would be done; change nothing.") var dryRun = false
            @Flag(help: "Print JSON: one result per model.") var json = false

            func run() async throws {
                guard folder != nil || models != nil else {
                    throw ValidationError("Give the bulk download's folder, --models with the Model resources' JSON, or both.")
                }
                let export = try FirebaseExport(folder: folder, resources: models)
                let importer = FirebaseImport(client: try connection.client(), dryRun: dryRun)
                var results: [FirebaseImport.Result] = []
                for entry in export.entries { results.append(try await importer.run(entry)) }
                if json {
                    print(try JSONOutput.string(results))
                } else {
                    print(
                        TextTable(
                            ["FIREBASE MODEL", "MODEL", "FILE", "RESULT"],
                            results.map {
                                [
                                    $0.firebaseModel, $0.model ?? "-", $0.file.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "-",
                                    $0.outcome,
                                ]
                            }
                        ).rendered)
                    for file in export.unlisted {
                        print("Not in \(models ?? "the JSON"), not imported: \(URL(fileURLWithPath: file).lastPathComponent)")
                    }
                }
                let failed = results.filter { !$0.imported }.count
                if failed > 0 {
                    printError("\(failed) of \(results.count) Firebase models were not imported (see RESULT); nothing of them was kept.")
                    throw ExitCode(1)
                }
            }
        }
    }
}
