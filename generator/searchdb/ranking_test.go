package searchdb

import (
	"context"
	"strings"
	"testing"
)

// rankingCorpus is built so that each ordering rule of SearchSQL decides a case that bm25
// alone gets wrong: the row a reader wants holds the query words fewer times, or not all of
// them, than a competing row.
var rankingCorpus = []Record{
	// NCCL_DEBUG's text has no "info"; the other two rows hold every word, often.
	{Kind: KindEnv, Title: "NCCL_DEBUG", URL: "env/#NCCL_DEBUG", Text: "Logging verbosity of NCCL. Default: unset.", Identifiers: []string{"NCCL_DEBUG"}},
	{Kind: KindEnv, Title: "NCCL_DEBUG_FILE", URL: "env/#NCCL_DEBUG_FILE", Text: "Where the NCCL debug info log goes when NCCL_DEBUG is INFO; info lines only. Default: stderr.", Identifiers: []string{"NCCL_DEBUG_FILE"}},
	{Kind: KindSection, Title: "Reading an INFO log", URL: "notes/logs/#info", Text: "Set NCCL_DEBUG to INFO: every INFO line of nccl debug output is described here, info by info."},
	// A section whose title holds both words, against one that repeats them in its body.
	{Kind: KindSection, Title: "NCCL timeout and the watchdog", URL: "notes/troubleshooting/#nccl-timeout", Text: "The job dies ten minutes after it stopped."},
	{Kind: KindSection, Title: "Watchdog thread", URL: "notes/pg/#watchdog", Text: "The watchdog checks each timeout; on a timeout the watchdog aborts. Timeout after timeout."},
}

func TestRankingRules(t *testing.T) {
	db, _ := buildDB(t, rankingCorpus)
	for _, c := range []struct{ query, first string }{
		{"NCCL_DEBUG=INFO", "env/#NCCL_DEBUG"},
		{"export NCCL_DEBUG=INFO", "env/#NCCL_DEBUG"},
		{"nccl_debug=warn", "env/#NCCL_DEBUG"},
		// Without =VALUE the words are searched as words: the row with every word first.
		{"NCCL_DEBUG INFO", "env/#NCCL_DEBUG_FILE"},
		{"watchdog timeout", "notes/troubleshooting/#nccl-timeout"},
		{"timeout watchdog", "notes/troubleshooting/#nccl-timeout"},
	} {
		res, err := db.Search(context.Background(), c.query, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || res[0].URL != c.first {
			var got []string
			for _, r := range res {
				got = append(got, r.URL)
			}
			t.Errorf("%q: first %v, want %s", c.query, got, c.first)
		}
	}
}

// TestEnvSnippetIsMeaningAndDefault: an environment variable's snippet is its whole text,
// matched words marked, while a section's is a passage.
func TestEnvSnippetIsMeaningAndDefault(t *testing.T) {
	long := Record{Kind: KindSection, Title: "Long section", URL: "notes/long/#s",
		Text: strings.Repeat("filler words here ", 30) + "socket interface " + strings.Repeat("more filler ", 30)}
	env := Record{Kind: KindEnv, Title: "NCCL_SOCKET_IFNAME", URL: "env/#NCCL_SOCKET_IFNAME",
		Text:        "Interfaces NCCL sockets may use for bootstrap, as a prefix list where a caret excludes and an equals sign demands an exact match of the whole interface name. Default: auto.",
		Identifiers: []string{"NCCL_SOCKET_IFNAME"}}
	db, _ := buildDB(t, []Record{long, env})
	res, err := db.Search(context.Background(), "socket interface", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		text := r.SnippetText("", "")
		switch r.Kind {
		case KindEnv:
			if text != env.Text {
				t.Errorf("env snippet %q, want the whole text %q", text, env.Text)
			}
			if !strings.Contains(r.Snippet, "<mark>") {
				t.Errorf("env snippet %q marks no match", r.Snippet)
			}
		case KindSection:
			if len(text) >= len(long.Text)/2 || !strings.Contains(text, "…") {
				t.Errorf("section snippet %q is not a passage", text)
			}
		}
	}
	if len(res) != 2 {
		t.Fatalf("%d results, want 2", len(res))
	}
}
