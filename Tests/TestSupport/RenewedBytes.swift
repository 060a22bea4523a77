/// A "new model" for patch tests: new random bytes, but for 96 bytes from a random place of `old`
/// every 4 KiB (the structure a new model shares with the old one). Each stretch is at another
/// offset from the last, so the difference takes a step at each.
public func renewedBytes(from old: [UInt8], count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
    precondition(old.count > 96, "a test's old file is longer than a stretch")
    var renewed: [UInt8] = []
    while renewed.count < count {
        let from = Int.random(in: 0..<(old.count - 96), using: &generator)
        renewed += (0..<4_000).map { _ in UInt8.random(in: 0...255, using: &generator) } + old[from..<(from + 96)]
    }
    return renewed
}
