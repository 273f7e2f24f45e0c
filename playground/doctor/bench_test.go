package doctor

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParseLogSynthetic measures throughput (MB/s via SetBytes) on 16 MB
// of the synthetic eight-rank log of TestLargeLog50MB.
func BenchmarkParseLogSynthetic(b *testing.B) {
	const size = 16 << 20
	data, err := io.ReadAll(&synthLog{size: size})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := ParseLog(bytes.NewReader(data), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLogFixtures measures throughput on the published logs,
// concatenated and repeated to about 8 MB: a mix of NCCL INFO/WARN lines,
// TUNING tables and PyTorch watchdog messages.
func BenchmarkParseLogFixtures(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	var one []byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		one = append(one, d...)
	}
	if len(one) == 0 {
		b.Skip("no fixtures")
	}
	data := bytes.Repeat(one, (8<<20)/len(one)+1)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := ParseLog(bytes.NewReader(data), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
