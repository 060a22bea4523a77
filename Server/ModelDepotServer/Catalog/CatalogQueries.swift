/// Queries both catalogs run word for word: the SQLite tables have PostgreSQL's names (SQLite
/// migration v16), so one text serves both.
enum CatalogQueries {
    /// Every blob a version, a companion file or an offered patch references, once per model
    /// that references it: SHA-256, size, model name.
    static let blobReferences = """
        SELECT DISTINCT version.sha256, version.size, model.name FROM version JOIN model ON model.id = version.model_id
        UNION SELECT DISTINCT version_file.sha256, version_file.size, model.name FROM version_file
            JOIN version ON version.id = version_file.version_id JOIN model ON model.id = version.model_id
        UNION SELECT DISTINCT version_patch.sha256, version_patch.size, model.name FROM version_patch
            JOIN version ON version.id = version_patch.version_id JOIN model ON model.id = version.model_id
            WHERE version_patch.sha256 IS NOT NULL
        """

    /// Every file of every published version: model name, version number, file name (`''` for
    /// the model), SHA-256, size.
    static let publishedFiles = """
        SELECT model.name, version.number, '' AS file, version.sha256, version.size FROM version
            JOIN model ON model.id = version.model_id WHERE version.published
        UNION ALL SELECT model.name, version.number, version_file.name, version_file.sha256, version_file.size FROM version_file
            JOIN version ON version.id = version_file.version_id JOIN model ON model.id = version.model_id WHERE version.published
        """
}
