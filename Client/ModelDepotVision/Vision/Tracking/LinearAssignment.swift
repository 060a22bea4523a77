/// The pairing of rows and columns with the least total cost (the Hungarian method with
/// potentials, O(n³)), where a pair costing more than `limit` is not made: as `lap.lapjv` with
/// `cost_limit`, which ByteTrack uses, each row and column may instead go unpaired at half the
/// limit.
enum LinearAssignment {
    /// - Parameter costs: `costs[row][column]`, every row the same length.
    /// - Returns: The pairs made, by row.
    static func pairs(_ costs: [[Double]], limit: Double) -> [(row: Int, column: Int)] {
        let rows = costs.count
        let columns = costs.first?.count ?? 0
        guard rows > 0, columns > 0 else { return [] }
        // Rows, then a dummy row per column; columns, then a dummy column per row.
        let size = rows + columns
        let unpaired = limit / 2
        let impossible = limit * 4 + 1
        func cost(_ row: Int, _ column: Int) -> Double {
            switch (row < rows, column < columns) {
            case (true, true): costs[row][column] <= limit ? costs[row][column] : impossible
            case (true, false), (false, true): unpaired
            case (false, false): 0
            }
        }
        // One-based potentials and matches (index 0 is the method's free slot).
        var rowPotential = [Double](repeating: 0, count: size + 1)
        var columnPotential = [Double](repeating: 0, count: size + 1)
        var rowOfColumn = [Int](repeating: 0, count: size + 1)
        var way = [Int](repeating: 0, count: size + 1)
        for row in 1...size {
            rowOfColumn[0] = row
            var column = 0
            var smallest = [Double](repeating: .infinity, count: size + 1)
            var used = [Bool](repeating: false, count: size + 1)
            repeat {
                used[column] = true
                let current = rowOfColumn[column]
                var delta = Double.infinity
                var next = 0
                for candidate in 1...size where !used[candidate] {
                    let reduced = cost(current - 1, candidate - 1) - rowPotential[current] - columnPotential[candidate]
                    if reduced < smallest[candidate] {
                        smallest[candidate] = reduced
                        way[candidate] = column
                    }
                    if smallest[candidate] < delta {
                        delta = smallest[candidate]
                        next = candidate
                    }
                }
                for index in 0...size {
                    if used[index] {
                        rowPotential[rowOfColumn[index]] += delta
                        columnPotential[index] -= delta
                    } else {
                        smallest[index] -= delta
                    }
                }
                column = next
            } while rowOfColumn[column] != 0
            repeat {
                let previous = way[column]
                rowOfColumn[column] = rowOfColumn[previous]
                column = previous
            } while column != 0
        }
        var pairs: [(row: Int, column: Int)] = []
        for column in 1...size where column <= columns && rowOfColumn[column] >= 1 && rowOfColumn[column] <= rows {
            let row = rowOfColumn[column] - 1
            if costs[row][column - 1] <= limit { pairs.append((row, column - 1)) }
        }
        return pairs.sorted { $0.row < $1.row }
    }
}
