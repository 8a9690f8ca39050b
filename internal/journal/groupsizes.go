package journal

import "sync/atomic"

// GroupSizeBounds are the upper bounds of GroupSizes' buckets: how many
// appends (commits, for the most part) one fsync of the group commit
// covered. The last bucket takes the rest. 64 is the most a gathering
// group commit waits for (gatherGroup), so larger groups are rare.
var GroupSizeBounds = [...]uint64{1, 2, 4, 8, 16, 32, 64}

// GroupSizes is a histogram of the group commit's fsyncs by the number of
// appends each covered: Counts[i] is the fsyncs that covered at most
// GroupSizeBounds[i] appends and more than the bound before it
// (Counts[len(GroupSizeBounds)]: more than the last bound). An fsync that
// found nothing new to cover counts as 0 (in the first bucket).
type GroupSizes struct {
	Counts [len(GroupSizeBounds) + 1]uint64
	Sum    uint64 // appends covered in all
}

// Add adds o's counts to g.
func (g *GroupSizes) Add(o GroupSizes) {
	for i := range g.Counts {
		g.Counts[i] += o.Counts[i]
	}
	g.Sum += o.Sum
}

// groupSizes is GroupSizes kept in atomics: the fsyncing caller writes,
// readers (the metrics) read at any time.
type groupSizes struct {
	counts [len(GroupSizeBounds) + 1]atomic.Uint64
	sum    atomic.Uint64
}

func (g *groupSizes) note(n uint64) {
	i := 0
	for i < len(GroupSizeBounds) && n > GroupSizeBounds[i] {
		i++
	}
	g.counts[i].Add(1)
	g.sum.Add(n)
}

func (g *groupSizes) load() GroupSizes {
	var out GroupSizes
	for i := range g.counts {
		out.Counts[i] = g.counts[i].Load()
	}
	out.Sum = g.sum.Load()
	return out
}
