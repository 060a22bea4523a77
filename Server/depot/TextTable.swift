/// Columns aligned with spaces, for listings on a terminal; every cell escaped (``TerminalText``).
struct TextTable {
    let header: [String]
    let rows: [[String]]

    init(_ header: [String], _ rows: [[String]]) {
        self.header = header.map(TerminalText.escaped)
        self.rows = rows.map { $0.map(TerminalText.escaped) }
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
