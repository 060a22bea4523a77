import Foundation
import ModelDepotRollouts
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    /// Writes a flush in three statements, whatever its size. Rows are inserted in key order, so
    /// replicas flushing the same minute at once lock them in the same order.
    public func recordUsage(_ counts: [UsageCounter.Key: Int], installations: [UsageCounter.Installation: Int]) async throws {
        guard !counts.isEmpty || !installations.isEmpty else { return }
        var manifests = (names: [String](), versions: [Int](), arms: [String](), minutes: [Int](), counts: [Int]())
        var downloads = (digests: [String](), arms: [String](), minutes: [Int](), counts: [Int]())
        for (key, count) in counts {
            switch key.subject {
            case .manifest(let model, let version):
                manifests.names.append(model.rawValue)
                manifests.versions.append(version)
                manifests.arms.append(key.arm.stored)
                manifests.minutes.append(key.minute)
                manifests.counts.append(count)
            case .download(let sha256):
                downloads.digests.append(sha256)
                downloads.arms.append(key.arm.stored)
                downloads.minutes.append(key.minute)
                downloads.counts.append(count)
            }
        }
        var seen = (names: [String](), arms: [String](), versions: [Int](), installations: [Int64](), minutes: [Int]())
        for (installation, minute) in installations {
            seen.names.append(installation.model.rawValue)
            seen.arms.append(installation.arm.stored)
            seen.versions.append(installation.version)
            seen.installations.append(installation.installation)
            seen.minutes.append(minute)
        }
        try await transaction { [logger, seen, manifests, downloads] connection in
            try await connection.query(
                """
                INSERT INTO arm_installation (model_id, arm, version, installation, minute)
                SELECT model.id, u.arm, u.version, u.installation, u.minute
                FROM unnest(\(seen.names)::text[], \(seen.arms)::text[], \(seen.versions)::bigint[], \(seen.installations)::bigint[], \(seen.minutes)::bigint[])
                     AS u(name, arm, version, installation, minute)
                JOIN model ON model.name = u.name
                ORDER BY model.id, u.arm, u.version, u.installation
                ON CONFLICT DO NOTHING
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO usage (model_id, version, arm, kind, minute, count)
                SELECT model.id, u.version, u.arm, \(UsageKind.manifest.rawValue)::text, u.minute, u.count
                FROM unnest(\(manifests.names)::text[], \(manifests.versions)::bigint[], \(manifests.arms)::text[], \(manifests.minutes)::bigint[], \(manifests.counts)::bigint[])
                     AS u(name, version, arm, minute, count)
                JOIN model ON model.name = u.name
                ORDER BY model.id, u.version, u.arm, u.minute
                ON CONFLICT (model_id, version, arm, kind, minute) DO UPDATE SET count = usage.count + excluded.count
                """, logger: logger)
            // A download counts for every version with that file.
            try await connection.query(
                """
                INSERT INTO usage (model_id, version, arm, kind, minute, count)
                SELECT version.model_id, version.number, u.arm, \(UsageKind.download.rawValue)::text, u.minute, u.count
                FROM unnest(\(downloads.digests)::text[], \(downloads.arms)::text[], \(downloads.minutes)::bigint[], \(downloads.counts)::bigint[])
                     AS u(sha256, arm, minute, count)
                JOIN version ON version.sha256 = u.sha256
                ORDER BY version.model_id, version.number, u.arm, u.minute
                ON CONFLICT (model_id, version, arm, kind, minute) DO UPDATE SET count = usage.count + excluded.count
                """, logger: logger)
        }
    }

    public func usage(of name: ModelName, sinceMinute minute: Int) async throws -> [UsageRow] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query(
                """
                SELECT version::bigint, arm, kind, minute, count FROM usage WHERE model_id = \(id) AND minute >= \(minute)
                """, logger: logger)
            var usage: [UsageRow] = []
            for try await (version, arm, kind, minute, count) in rows.decode((Int, String, String, Int, Int).self) {
                usage.append(
                    UsageRow(
                        version: version, arm: CountedArm(stored: arm), kind: try UsageKind(stored: kind), minute: minute, count: count))
            }
            return usage
        }
    }

    public func installations(of name: ModelName, sinceMinute minute: Int) async throws -> [InstallationCount] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query(
                """
                SELECT arm, version::bigint, COUNT(*)::bigint FROM arm_installation WHERE model_id = \(id) AND minute >= \(minute)
                GROUP BY arm, version
                """, logger: logger)
            var counts: [InstallationCount] = []
            for try await (arm, version, count) in rows.decode((String, Int, Int).self) {
                counts.append(InstallationCount(arm: CountedArm(stored: arm), version: version, count: count))
            }
            return counts
        }
    }
}
