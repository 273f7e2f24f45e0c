// Package presetmatch picks the built-in system (data/topologies/presets.tsv)
// closest to what a log says of a machine: the GPU's name, how many GPUs a
// host has and how many hosts run. It reads only the presets' names and
// titles, never their topology files, so that the log doctor can name a
// preset without carrying the topologies.
package presetmatch

import (
	"strconv"
	"strings"
	"sync"

	"github.com/distributed-nav/distributed-nav/data"
)

// Choice is the preset a machine description points to.
type Choice struct {
	// Name is the preset's name (ncclsim --preset NAME), Title its display
	// name from the presets table.
	Name, Title string
	// GPUs is the number of GPUs per host the title gives, 0 if it gives
	// none.
	GPUs int
	// Exact is true when the GPU count and the single- or multi-node kind
	// of the preset are the ones asked for, not only the GPU model.
	Exact bool
}

// multiNode is the presets table's group of systems of several hosts.
const multiNode = "Multi-node"

// entry is one line of the presets table.
type entry struct {
	name, group, title string
	tokens             []string
	gpus               int
}

var table struct {
	once    sync.Once
	entries []entry
}

// entries parses the presets table on first use (not in an initialiser,
// so that binaries that never ask pay nothing at start-up).
func entries() []entry {
	table.once.Do(func() {
		for _, ln := range strings.Split(data.PresetTable, "\n") {
			ln = strings.TrimRight(ln, "\r")
			if ln == "" || strings.HasPrefix(ln, "#") {
				continue
			}
			f := strings.Split(ln, "\t")
			if len(f) != 3 {
				continue
			}
			table.entries = append(table.entries, entry{name: f[0], group: f[1], title: f[2], tokens: modelTokens(f[2]), gpus: leadingCount(f[2])})
		}
	})
	return table.entries
}

// modelTokens returns the words of a GPU or preset name that identify a
// GPU model: a number of two to four digits with an optional letter
// prefix or suffix ("4090", "h100", "a40", "l40s", "a10g"), lower-cased.
// Memory sizes, form factors and link names ("80gb", "sxm5", "hbm3",
// "pcie", "400") are left out. NVIDIA's data-center parts named by one
// letter and one digit (shortModels) are models too; other such words in
// titles ("A3", "A4", "g5.") name cloud instances.
func modelTokens(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if isModel(w) {
			out = append(out, w)
		}
	}
	return out
}

// shortModels are the GPU models whose number has a single digit.
var shortModels = map[string]bool{"t4": true, "l4": true, "a2": true}

func isModel(w string) bool {
	if shortModels[w] {
		return true
	}
	for _, skip := range []string{"gb", "sxm", "hbm", "pcie", "nvl", "gen"} {
		if strings.Contains(w, skip) {
			return false
		}
	}
	i := 0
	for i < len(w) && w[i] >= 'a' && w[i] <= 'z' {
		i++
	}
	j := i
	for j < len(w) && w[j] >= '0' && w[j] <= '9' {
		j++
	}
	digits, prefix, suffix := j-i, i, len(w)-j
	if digits < 2 || digits > 4 || prefix > 1 || suffix > 1 {
		return false
	}
	// A bare number of three digits is a link speed or a count ("400 Gb/s"),
	// not a GPU; GPU numbers are four digits or carry a letter.
	return prefix+suffix > 0 || digits == 4
}

// leadingCount reads the "8×" (or "8x") a preset title starts with.
func leadingCount(title string) int {
	i := 0
	for i < len(title) && title[i] >= '0' && title[i] <= '9' {
		i++
	}
	rest := title[i:]
	if i == 0 || !(strings.HasPrefix(rest, "×") || strings.HasPrefix(rest, "x")) {
		return 0
	}
	n, _ := strconv.Atoi(title[:i])
	return n
}

// Best returns the preset closest to gpu (a device name as NCCL, nccl-tests
// or nvidia-smi print it, e.g. "NVIDIA GeForce RTX 4090"), with perHost GPUs
// on each of hosts hosts (0: not known). A preset qualifies only if its
// title names the same GPU model; among those the one with the same GPU
// count wins, then the smallest larger one, then the largest; a job over
// several hosts prefers the multi-node presets and a single host the
// others; the words PCIe and SXM of the device name break ties.
func Best(gpu string, perHost, hosts int) (Choice, bool) {
	want := modelTokens(gpu)
	if len(want) == 0 {
		return Choice{}, false
	}
	low := strings.ToLower(gpu)
	bestScore, best := -1, entry{}
	for _, e := range entries() {
		if !sharesToken(want, e.tokens) {
			continue
		}
		if strings.Contains(low, "sxm") && strings.HasPrefix(strings.ToLower(e.group), "pcie") {
			// An SXM module sits on NVLink: a box of PCIe cards of the
			// same chip (V100 PCIe for a V100 SXM2) is another system.
			continue
		}
		score := 0
		multi := e.group == multiNode
		if hosts > 1 && multi || hosts <= 1 && !multi {
			score += 100
		}
		switch {
		case perHost <= 0:
		case e.gpus == perHost:
			score += 50
		case e.gpus > perHost:
			score += 40 - min(e.gpus-perHost, 30)
		default:
			score += 10 - min(perHost-e.gpus, 9)
		}
		t := strings.ToLower(e.title)
		for _, form := range []string{"pcie", "sxm"} {
			if strings.Contains(low, form) && strings.Contains(t, form) {
				score += 5
			}
		}
		if score > bestScore {
			bestScore, best = score, e
		}
	}
	if bestScore < 0 {
		return Choice{}, false
	}
	exact := (perHost <= 0 || best.gpus == perHost) && (hosts > 1) == (best.group == multiNode)
	return Choice{Name: best.name, Title: best.title, GPUs: best.gpus, Exact: exact}, true
}

func sharesToken(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}
