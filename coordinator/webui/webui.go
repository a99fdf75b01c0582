package webui

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Source reads the views the UI shows; the coordinator's Store is one.
type Source interface {
	// JobSummaries returns up to n jobs, newest first.
	JobSummaries(ctx context.Context, n int64) ([]JobSummary, error)
	// JobDetail returns one job; an unknown id gives an error matching
	// ErrNotFound.
	JobDetail(ctx context.Context, id string) (*JobDetail, error)
}

// ErrNotFound is matched by the error a Source returns for an unknown job.
var ErrNotFound = errors.New("job not found")

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// States the jobs list filters by.
var listStates = []string{"running", "succeeded", "failed", "cancelled"}

// UI serves the pages under /ui/.
type UI struct {
	src  Source
	log  *slog.Logger
	tmpl *template.Template
}

// New returns the UI over src.
func New(src Source, log *slog.Logger) *UI {
	if log == nil {
		log = slog.Default()
	}
	return &UI{src: src, log: log, tmpl: template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html"))}
}

// Handler serves GET /ui/ (the jobs list, ?state= filters, ?q=
// searches, ?page= pages), GET
// /ui/jobs/{id} (a job) and GET /ui/static/ (embedded assets).
func (u *UI) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /ui/{$}", u.list)
	mux.HandleFunc("GET /ui/jobs/{id}", u.job)
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusFound) })
	return mux
}

type listPage struct {
	Title  string
	Live   bool
	State  string
	Query  string // the search: jobs whose id, SQL, state or error contain it
	States []string
	Counts map[string]int
	Jobs   []JobSummary // the page shown
	Total  int          // jobs read
	// Matched counts the jobs the state and search keep; the page shows
	// From to To (1-based) of them.
	Matched, From, To int
	Page              int
	Prev, Next        string // links to the neighbouring pages ("": none)
	// More links to a longer window when the newest N jobs were all read.
	More string
}

// listPageSize is the jobs shown per page of the jobs list.
const listPageSize = 50

// list serves the jobs list: ?state= filters, ?q= searches (case-
// insensitive, in the id, SQL, state and error), ?page= pages (50 a
// page) over the newest ?n= jobs (default 200, as before: every job read
// is a few Redis round trips, on every live refresh).
func (u *UI) list(w http.ResponseWriter, r *http.Request) {
	qv := r.URL.Query()
	n, _ := strconv.ParseInt(qv.Get("n"), 10, 64)
	if n <= 0 || n > 5000 {
		n = 200
	}
	jobs, err := u.src.JobSummaries(r.Context(), n)
	if err != nil {
		u.fail(w, http.StatusInternalServerError, err)
		return
	}
	p := listPage{Title: "jobs", Live: true, State: qv.Get("state"), Query: strings.TrimSpace(qv.Get("q")), States: listStates,
		Counts: map[string]int{}, Total: len(jobs)}
	needle := strings.ToLower(p.Query)
	var kept []JobSummary
	for _, j := range jobs {
		if needle != "" && !strings.Contains(strings.ToLower(j.ID+"\n"+j.SQL+"\n"+j.State+"\n"+j.Error), needle) {
			continue
		}
		p.Counts[j.State]++
		if p.State == "" || j.State == p.State {
			kept = append(kept, j)
		}
	}
	p.Matched = len(kept)
	pages := max((len(kept)+listPageSize-1)/listPageSize, 1)
	p.Page, _ = strconv.Atoi(qv.Get("page"))
	p.Page = min(max(p.Page, 1), pages)
	lo, hi := (p.Page-1)*listPageSize, min(p.Page*listPageSize, len(kept))
	p.Jobs = kept[lo:hi]
	if len(p.Jobs) > 0 {
		p.From, p.To = lo+1, hi
	}
	link := func(page int) string {
		v := url.Values{}
		if p.State != "" {
			v.Set("state", p.State)
		}
		if p.Query != "" {
			v.Set("q", p.Query)
		}
		if qv.Get("n") != "" {
			v.Set("n", strconv.FormatInt(n, 10))
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if len(v) == 0 {
			return "/ui/"
		}
		return "/ui/?" + v.Encode()
	}
	if p.Page > 1 {
		p.Prev = link(p.Page - 1)
	}
	if p.Page < pages {
		p.Next = link(p.Page + 1)
	}
	if int64(len(jobs)) == n && n < 5000 {
		v := r.URL.Query()
		v.Set("n", strconv.FormatInt(min(n*5, 5000), 10))
		p.More = "/ui/?" + v.Encode()
	}
	u.render(w, "list.html", p)
}

type jobPage struct {
	Title    string
	Live     bool
	Job      *JobDetail
	Current  *svgGraph
	Rounds   []roundView
	Initial  *svgGraph
	Final    *svgGraph
	Timeline *svgTimeline
	Peak     bool // some stage reported peak memory
	Selected string
	// Tasks are the job's tasks by stage and task (the timeline keeps
	// them in start order).
	Tasks []Task
}

func sortedTasks(ts []Task) []Task {
	out := append([]Task(nil), ts...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Stage != out[j].Stage {
			return out[i].Stage < out[j].Stage
		}
		return out[i].Task < out[j].Task
	})
	return out
}

type roundView struct {
	Round   int
	After   []int
	Fired   []Fired
	Changes map[int][]string
	Plan    string
	SVG     *svgGraph
}

func (u *UI) job(w http.ResponseWriter, r *http.Request) {
	d, err := u.src.JobDetail(r.Context(), r.PathValue("id"))
	if errors.Is(err, ErrNotFound) {
		u.fail(w, http.StatusNotFound, err)
		return
	}
	if err != nil {
		u.fail(w, http.StatusInternalServerError, err)
		return
	}
	p := jobPage{Title: "job " + d.ID, Live: d.State == "running", Job: d, Current: layoutGraph(d.Graph, nil),
		Tasks:    sortedTasks(d.Tasks),
		Timeline: layoutTimeline(d.Tasks, d.Now), Selected: r.URL.Query().Get("round")}
	for _, rd := range d.Rounds {
		g := rd.Graph
		if g == nil {
			g = d.Graph // an old round without its graph: the plan's shape as it is now
		}
		p.Rounds = append(p.Rounds, roundView{Round: rd.Round, After: rd.After, Fired: rd.Fired, Changes: rd.Changes,
			Plan: rd.Plan, SVG: layoutGraph(g, rd.Changes)})
	}
	if len(p.Rounds) > 0 {
		p.Initial = p.Rounds[0].SVG
		p.Final = layoutGraph(d.Graph, finalChanges(d))
	}
	for _, s := range d.Stages {
		if s.PeakMemory > 0 {
			p.Peak = true
		}
	}
	if p.Selected == "" {
		p.Selected = "compare"
	}
	u.render(w, "job.html", p)
}

// finalChanges marks the stages of the final plan that any round changed.
func finalChanges(d *JobDetail) map[int][]string {
	out := map[int][]string{}
	for _, r := range d.Rounds {
		for id, c := range r.Changes {
			for _, what := range c {
				out[id] = append(out[id], fmt.Sprintf("round %d: %s", r.Round, what))
			}
		}
	}
	return out
}

func (u *UI) render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := u.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		u.fail(w, http.StatusInternalServerError, fmt.Errorf("render %s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b.Bytes())
}

func (u *UI) fail(w http.ResponseWriter, code int, err error) {
	if code >= 500 {
		u.log.Error("web ui", "err", err)
	}
	var b bytes.Buffer
	_ = u.tmpl.ExecuteTemplate(&b, "error.html", map[string]any{"Title": "error", "Code": code, "Error": err.Error()})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

var funcs = template.FuncMap{
	"bytes": humanBytes,
	"when":  humanTime,
	"secs":  humanSeconds,
	"ints":  joinInts,
	"join":  strings.Join,
	"objURL": func(job, key string) string {
		return "/v1/jobs/" + url.PathEscape(job) + "/objects?key=" + url.QueryEscape(key)
	},
	"add":    func(a, b int) int { return a + b },
	"comma":  func(n int64) string { return commaInt(n) },
	"skewed": func(p50, mx float64) bool { return p50 > 0 && mx > 2*p50 },
	"stagesAttr": func(ids []int) string {
		return joinInts(ids)
	},
	"usd":       usd,
	"firstLine": firstLine,
	"fit":       fit,
	"costLine":  costLine,
	"skipWord":  skipWord,
	"skewQ": func(q *Quantiles) bool {
		return q != nil && q[2] > 0 && q[4] > 2*q[2]
	},
	"sumCounts": func(m map[string]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	},
	// trimStage shortens "inlined into stage 4,5" to "stage 4,5".
	"trimStage": func(reason string) string {
		if i := strings.Index(reason, "stage"); i >= 0 {
			return reason[i:]
		}
		return reason
	},
	"progress": func(done, total, w int) int {
		if total <= 0 {
			return 0
		}
		return min(done, total) * w / total
	},
	// tablesText names what a stage reads: its tables, then the stages
	// it reads ("lineitem · reads s1").
	"tablesText": func(s GraphStage, reads string) string {
		return strings.Join(slices.DeleteFunc([]string{strings.Join(s.Tables, ", "), reads}, func(x string) bool { return x == "" }), " · ")
	},
	"setting": settingText,
}

// settingText shows a knob's value: byte sizes with units ("1 GiB",
// "256 KiB"), the rest as recorded; "default" when empty.
func settingText(s Setting) string {
	if s.Value == "" {
		return "default"
	}
	if strings.HasSuffix(s.Name, "-bytes") || strings.HasSuffix(s.Name, "-memory") {
		if n, err := strconv.ParseInt(s.Value, 10, 64); err == nil && n > 0 {
			for _, u := range []struct {
				size int64
				unit string
			}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
				if n%u.size == 0 {
					return strconv.FormatInt(n/u.size, 10) + " " + u.unit
				}
			}
			return humanBytes(n)
		}
	}
	return s.Value
}

// usd formats dollars: cents above a cent, two significant digits below
// ("$0.42", "$0.000098"); "–" when nothing was priced (v < 0).
func usd(v float64) string {
	switch {
	case v < 0:
		return "–"
	case v == 0:
		return "$0"
	case v >= 0.01:
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	}
	digits := int(-math.Floor(math.Log10(v))) + 1
	return "$" + strconv.FormatFloat(v, 'f', digits, 64)
}

// firstLine is a SQL text's first non-blank line, cut to about 90
// characters with "…" (more follows: "…" too).
func firstLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line := strings.TrimSpace(lines[0])
	more := len(lines) > 1
	if r := []rune(line); len(r) > 90 {
		line, more = string(r[:89]), true
	}
	if more {
		line += " …"
	}
	return line
}

// fit cuts s to n characters, the last one "…".
func fit(n int, s string) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// costLine spells the priced parts of a job's cost ("0.107 GB-s · 4
// invocations · 54 S3 requests (38 GET, 16 PUT)").
func costLine(m map[string]string) string {
	var parts []string
	if v := m["cost_gb_seconds"]; v != "" {
		parts = append(parts, v+" GB-s")
	}
	if v := m["cost_invocations"]; v != "" {
		parts = append(parts, v+" invocations")
	}
	if v := m["s3_requests"]; v != "" {
		var kinds []string
		for _, k := range []string{"get", "put", "list", "delete"} {
			if n := m["s3_"+k]; n != "" && n != "0" {
				kinds = append(kinds, n+" "+strings.ToUpper(k))
			}
		}
		s := v + " S3 requests"
		if len(kinds) > 0 {
			s += " (" + strings.Join(kinds, ", ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

// skipWord says how a skipped stage went: "inlined" (its table is read by
// its readers' tasks), "fused" (its work moved into its reader), or
// "skipped".
func skipWord(reason string) string {
	switch {
	case strings.HasPrefix(reason, "inlined into"):
		return "inlined"
	case strings.HasPrefix(reason, "fused into"):
		return "fused"
	}
	return "skipped"
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// humanTime shortens an RFC 3339 timestamp to the second, in UTC.
func humanTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func humanSeconds(s float64) string {
	switch {
	case s <= 0:
		return "–"
	case s < 1:
		return fmt.Sprintf("%.0f ms", s*1000)
	case s < 60:
		return fmt.Sprintf("%.2f s", s)
	default:
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	}
}

func joinInts(ids []int) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return strings.Join(out, " ")
}

func commaInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
