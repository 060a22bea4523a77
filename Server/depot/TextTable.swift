/// Columns aligned with spaces, for listings on a terminal.
struct TextTable {
    let header: [String]
    let rows: [[String]]

    init(_ header: [String], _ rows: [[String]]) {
        self.header = header
        self.rows = rows
    }

    var rendered: String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
