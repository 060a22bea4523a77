import ModelDepotRollouts
import ModelDepotShared
import Testing

@Suite struct RolloutBucketTests {
    @Test func bucketsMatchTheDocumentedVectors() {
        #expect(RolloutBucket.hash(salt: "r-7f3a", installationID: "device-1") == 2_425_659_163)
        #expect(RolloutBucket.bucket(salt: "r-7f3a", installationID: "device-1") == 5647)
        #expect(RolloutBucket.bucket(salt: "r-7f3a", installationID: "device-2") == 513)
        #expect(RolloutBucket.bucket(salt: "r-9c01", installationID: "device-1") == 9391)
    }

    @Test func installationIDsAreCaseInsensitive() {
        let id = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
        #expect(RolloutBucket.bucket(salt: "s", installationID: id) == RolloutBucket.bucket(salt: "s", installationID: id.lowercased()))
    }

    /// 100,000 synthetic devices against 90/10 land within 4σ of 90,000 / 10,000.
    @Test func ninetyTenSplitIsWithinFourSigma() throws {
        let split = try RolloutSplit(shares: [(7, 9_000), (8, 1_000)])
        let devices = 100_000
        let onEight = (0..<devices).filter {
            split.version(forBucket: RolloutBucket.bucket(salt: "r-1", installationID: "device-\($0)")) == 8
        }.count
        let sigma = (Double(devices) * 0.1 * 0.9).squareRoot()
        #expect(abs(Double(onEight) - 10_000) < 4 * sigma, "\(onEight) devices on the 10% arm")
    }

    /// Two rules with different salts decide independently: joint counts match the product of
    /// the marginals within 4σ.
    @Test func differentSaltsAreIndependent() {
        let devices = 100_000
        var joint = [[0, 0], [0, 0]]
        for index in 0..<devices {
            let first = RolloutBucket.bucket(salt: "r-a", installationID: "device-\(index)") < 5_000 ? 1 : 0
            let second = RolloutBucket.bucket(salt: "r-b", installationID: "device-\(index)") < 2_000 ? 1 : 0
            joint[first][second] += 1
        }
        let firstShare = Double(joint[1][0] + joint[1][1]) / Double(devices)
        let secondShare = Double(joint[0][1] + joint[1][1]) / Double(devices)
        for first in 0...1 {
            for second in 0...1 {
                let p = (first == 1 ? firstShare : 1 - firstShare) * (second == 1 ? secondShare : 1 - secondShare)
                let sigma = (Double(devices) * p * (1 - p)).squareRoot()
                #expect(abs(Double(joint[first][second]) - Double(devices) * p) < 4 * sigma, "cell \(first),\(second)")
            }
        }
    }
}
