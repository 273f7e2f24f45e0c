//go:build !nopaste

package service

import (
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/compare"
)

// TestCompareTableSaysHowManyMore checks the caption of a capped table:
// 8,192 rows shown as MaxShownCompareRows name the 8,064 left out.
func TestCompareTableSaysHowManyMore(t *testing.T) {
	c := &compare.Result{Coll: "allreduce", NRanks: 8, Rows: make([]compare.Row, 8192)}
	html := compareTable(c)
	if n := strings.Count(html, `data-row="compare"`); n != MaxShownCompareRows {
		t.Errorf("%d rows drawn, want %d", n, MaxShownCompareRows)
	}
	if want := "and " + strconv.Itoa(8192-MaxShownCompareRows) + " more rows"; !strings.Contains(html, want) {
		t.Errorf("caption does not say %q", want)
	}
}
