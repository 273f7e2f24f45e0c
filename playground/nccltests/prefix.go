package nccltests

import "strings"

// stripLauncher removes what launchers put before each line of a
// program's output: Open MPI's --tag-output "[1,0]<stdout>:", its
// --timestamp-output ctime stamp ("Mon Dec  1 19:40:32 2025") in front of
// the tag, PRRTE's "[job,rank]:", "[namespace,rank][host:pid]<stream>:"
// and "[datetime]<stream>:", Slurm's "srun -l" label "12: ", and the
// surrounding blanks. Text that only looks similar ("[root@host ~]# ...",
// "[0] NCCL INFO") is left alone: a bracket group is a prefix only when a
// ':' (after an optional <stream> tag) follows the groups directly.
//
// Open MPI tags every write of a process, and nccl-tests prints a row in
// several writes (size and count, then the out-of-place block, then the
// in-place one), so a tagged row can carry the same tag again mid-line:
// "[1,0]<stdout>:  8  2  float  sum  -1[1,0]<stdout>:  85.70 ...". The tag
// removed at the start of the line is therefore removed wherever else it
// occurs on that line, when it names an output stream (a bare "[..]:"
// group is too common in ordinary text to be dropped mid-line).
func stripLauncher(s string) string {
	s = strings.TrimSpace(s)
	var streamTags []string
	for range 4 {
		t := s
		if n := ctimeLen(t); n > 0 {
			t = strings.TrimLeft(t[n:], " ")
		}
		u := stripTagGroups(t)
		if u != t && strings.Contains(t[:len(t)-len(u)], ">:") {
			streamTags = append(streamTags, t[:len(t)-len(u)])
		}
		t = stripSrunLabel(u)
		t = strings.TrimSpace(t)
		if t == s {
			break
		}
		s = t
	}
	for _, tag := range streamTags {
		if strings.Contains(s, tag) {
			s = strings.TrimSpace(strings.ReplaceAll(s, tag, " "))
		}
	}
	return s
}

// stripTagGroups removes "[..][..]<stream>:" or "[..]:" or "<stream>:" at
// the start of s.
func stripTagGroups(s string) string {
	i := 0
	groups := 0
	for i < len(s) && s[i] == '[' && groups < 4 {
		j := strings.IndexByte(s[i:], ']')
		if j < 0 || j > 96 {
			return s
		}
		i += j + 1
		groups++
	}
	if strings.HasPrefix(s[i:], "<") {
		j := strings.IndexByte(s[i:], '>')
		if j < 0 || j > 16 {
			return s
		}
		tag := s[i+1 : i+j]
		if tag != "stdout" && tag != "stderr" && tag != "stddiag" {
			return s
		}
		i += j + 1
	} else if groups == 0 {
		return s
	}
	if i < len(s) && s[i] == ':' {
		return s[i+1:]
	}
	return s
}

// stripSrunLabel removes Slurm's "N: " task label (srun --label).
func stripSrunLabel(s string) string {
	i := 0
	for i < len(s) && i < 6 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(s) && s[i] == ':' && s[i+1] == ' ' {
		return s[i+2:]
	}
	return s
}

// ctimeLen returns the length of a ctime(3) stamp at the start of s
// ("Www Mmm dd hh:mm:ss yyyy", 24 bytes), or 0.
func ctimeLen(s string) int {
	const pat = "AAA AAA 99 99:99:99 9999"
	if len(s) < len(pat) {
		return 0
	}
	for i := 0; i < len(pat); i++ {
		c, p := s[i], pat[i]
		switch p {
		case 'A':
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
				return 0
			}
		case '9':
			// The day of the month is space-padded.
			if !(c >= '0' && c <= '9' || c == ' ' && i == 8) {
				return 0
			}
		default:
			if c != p {
				return 0
			}
		}
	}
	return len(pat)
}
