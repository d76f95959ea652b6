import Foundation
@testable import SchedulerCore
import TaskState
import Testing

/// The chunked order of ``DateOrderedKeys`` against a plain sorted array, through enough inserts
/// and removals to split and empty chunks.
@Suite struct DateOrderedKeysTests {
    @Test func itKeepsTheOrderOfASortedArray() {
        var random = Seeded(7)
        var keys = DateOrderedKeys()
        var reference: [DateOrderedKeys.Entry] = []
        var largest = 0
        let apps = (0..<40).map { ident("com.example.order\($0)") }
        for step in 0..<6000 {
            let app = apps[random.below(apps.count)]
            let entry = DateOrderedKeys.Entry(date: at(Double(random.below(300))), key: TaskKey(app: app, identifier: ident("\(app).job\(random.below(40))")))
            // Grow for the first half, then shrink, so chunks split and then empty.
            if (step < 3000 ? random.below(4) != 0 : random.below(4) == 0) || reference.isEmpty {
                keys.insert(entry)
                reference.append(entry)
                reference.sort()
                largest = max(largest, reference.count)
            } else {
                let victim = reference.remove(at: random.below(reference.count))
                keys.remove(victim)
                keys.remove(entry == victim ? victim : DateOrderedKeys.Entry(date: at(-1), key: entry.key))
            }
            if step % 500 == 0 || step == 5999 {
                var seen: [DateOrderedKeys.Entry] = []
                keys.forEach { seen.append($0); return true }
                #expect(seen == reference, "step \(step)")
                #expect(keys.count == reference.count)
                let cut = at(Double(random.below(300)))
                var after: [DateOrderedKeys.Entry] = []
                keys.forEach(after: cut) { after.append($0); return true }
                #expect(after == reference.filter { $0.date > cut }, "step \(step): after \(cut)")
                var through: [DateOrderedKeys.Entry] = []
                keys.forEachBackward(through: cut) { through.append($0); return true }
                #expect(through == reference.filter { $0.date <= cut }.reversed(), "step \(step): through \(cut), backward")
                // Past every date, before every date, and stopped part way.
                var all: [DateOrderedKeys.Entry] = []
                keys.forEachBackward(through: at(1000)) { all.append($0); return true }
                #expect(all == reference.reversed())
                var none = 0
                keys.forEachBackward(through: at(-10)) { _ in none += 1; return true }
                #expect(none == 0)
                var three: [DateOrderedKeys.Entry] = []
                keys.forEachBackward(through: cut) { three.append($0); return three.count < 3 }
                #expect(three == Array(reference.filter { $0.date <= cut }.reversed().prefix(3)))
            }
        }
        #expect(largest > 2 * DateOrderedKeys.chunkLimit, "chunks were split")
        #expect(reference.count < DateOrderedKeys.chunkLimit, "and emptied")
    }
}
