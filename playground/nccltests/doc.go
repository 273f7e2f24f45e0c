// Package nccltests reads the text that NVIDIA's nccl-tests benchmarks
// (all_reduce_perf, all_gather_perf, ...) print, as users paste it: a whole
// console log or only the table, from any nccl-tests version since 1.0.
//
// What it accepts, because published runs contain all of it:
//
//   - the results table with the `#wrong` error column (nccl-tests 2.13 and
//     later), the older `error` column (maximum deviation, 2.0-2.12) and the
//     `res` column of 1.x; with or without the `redop` and `root` columns
//     (older binaries printed only the columns their collective uses); the
//     per-iteration (`-R`) and timestamp columns; `N/A` when checking was
//     off (`-c 0`); times printed as 1.2e+05;
//   - headerless tables (only the data rows were pasted): the layout is
//     taken from the row itself;
//   - the device list with `[0x1a]` (older) or `[0000:2c:00]` device ids,
//     the `# Collective test starting:` header of recent versions, `NCCL
//     version` and `# nccl-tests version` lines, NCCL_DEBUG=INFO lines
//     interleaved with the table;
//   - line prefixes that launchers add: Open MPI's `--tag-output`
//     (`[1,0]<stdout>:`), `--timestamp-output` (a ctime stamp or a
//     bracketed datetime before the tag), PRRTE's `[job,rank]:` and
//     `[namespace,rank][host:pid]<stream>:`, Slurm's `srun -l` (`0: `);
//     shell prompts and indentation; CRLF line ends;
//   - several runs in one file (each header starts a run), each with its
//     own collective, rank count and NCCL_ALGO / NCCL_PROTO settings.
//
// The collective comes from `# Collective test starting: X_perf` or the
// command line that names the binary; failing both, from the columns (the
// reduction operator, the root and the ratio of size to count). The rank
// count comes from the size/count ratio of the collectives whose size is
// the whole buffer (exact), from a complete list of `Rank` lines, or from
// the busbw/algbw ratio nccl-tests prints (busbw = algbw × 2(n-1)/n for
// AllReduce, (n-1)/n for the gathers); Options override both. Every number
// of a row is kept as printed, so that busbw read back equals the table.
//
// Bad input gives an error naming the line; a malformed row among good
// ones is skipped with a warning naming its line. Input size, line length,
// rows and runs are bounded (MaxInputBytes, MaxLineBytes, MaxRows,
// MaxRuns).
//
// The column layout follows nccl-tests' own printing code at commit
// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432 (version 2.19.6), src/util.cu
// (writeBenchmarkLinePreamble, writeBenchmarkLineBody, the table header)
// and the print_header functions of the 1.0.0-2.12 src/*.cu files.
package nccltests
