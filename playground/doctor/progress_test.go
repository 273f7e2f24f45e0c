package doctor

import (
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// TestWorkProgress reads the watchdog's per-rank progress in both PyTorch
// wordings and names the rank that completed the fewest collectives.
func TestWorkProgress(t *testing.T) {
	log := strings.Join([]string{
		"[rank0]:[E602 11:17:52.399 ProcessGroupNCCL.cpp:2268] [PG ID 1 PG GUID 1 Rank 0]  failure detected by watchdog at work sequence id: 2847 PG status: last enqueued work: 2855, last completed work: 2846",
		"[rank2]:[E602 11:17:52.400 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2847, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600080 milliseconds before timing out.",
		"[rank2]:[E602 11:17:52.400 ProcessGroupNCCL.cpp:2268] [PG ID 1 PG GUID 1 Rank 2]  failure detected by watchdog at work sequence id: 2847 PG status: last enqueued work: 2856, last completed work: 2846",
		"[rank5]:[E602 11:17:52.401 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 5] Exception (either an error or timeout) detected by watchdog at work: 2840, last enqueued NCCL work: 2841, last completed NCCL work: 2839.",
	}, "\n")
	s, err := ParseLog(strings.NewReader(log), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []WorkProgress{{0, "PG ID 1 PG GUID 1", 2847, 2855, 2846, 1}, {2, "PG ID 1 PG GUID 1", 2847, 2856, 2846, 3}, {5, "PG 1", 2840, 2841, 2839, 4}}
	if len(s.Progress) != len(want) {
		t.Fatalf("progress = %+v", s.Progress)
	}
	for i := range want {
		if s.Progress[i] != want[i] {
			t.Errorf("progress[%d] = %+v, want %+v", i, s.Progress[i], want[i])
		}
	}
	d := find(Diagnose(s, ncclenv.Env{}), "collective-timeout")
	if !strings.Contains(d.Explanation, "Rank(s) 5 completed the fewest collectives (#2839 against #2846)") {
		t.Errorf("explanation = %q", d.Explanation)
	}
}
