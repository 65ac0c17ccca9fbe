// extender-client sends kube-scheduler's filter and prioritize calls to extenders as kube-scheduler's own
// HTTPExtender sends them: Go's net/http client over one kept-alive connection per extender, a request body of JSON
// bytes with Content-Type application/json, one call at a time, filter then prioritize. It reads each answer whole and
// does not decode it (kube-scheduler decodes it with encoding/json, a cost of kube-scheduler's, not the extender's).
//
// Given several extenders (-url a,b), it warms each in turn, then times them in turn, a slice at a time, until each
// has had its seconds: a machine that slows down for a while (another guest on the host, a noisy neighbour) slows
// both alike, where timing one after the other gave the slow while to one of them and moved their ratio. Each turn
// starts with a few untimed rounds, so that what is timed is each extender running, not waking up.
//
// Every extender gets the same bodies, or each its own: -filter and -prioritize then hold one group of files per
// extender, the groups separated by ";" (hetgpu's extender answering a DRA cluster's pod beside the same extender
// answering the device-plugin pod, both timed in turn with the floor).
//
// hetgpu's extender benchmark runs it against hetgpu's extender and the Go floor, and reads the times of each round
// from its output: one line per round, "target filter-ns prioritize-ns" (target: the index in -url), then per target
// "bytes target filter-bytes prioritize-bytes".
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	urls := flag.String("url", "", "the extenders, comma-separated, e.g. http://127.0.0.1:18899,http://127.0.0.1:18888")
	filters := flag.String("filter", "", "files holding filter request bodies, comma-separated: round i sends body i mod n; "+
		"one group per extender, separated by \";\", to send each its own")
	prioritizes := flag.String("prioritize", "", "files holding prioritize request bodies, as many as -filter, grouped as it is")
	warmup := flag.Duration("warmup", 5*time.Second, "rounds sent first to each extender and not timed (at least 3)")
	seconds := flag.Float64("seconds", 10, "seconds of timed rounds for each extender (at least 10 rounds); 0 times none")
	slice := flag.Duration("slice", 500*time.Millisecond, "how long one extender is timed before the next one's turn")
	rewarm := flag.Duration("rewarm", 100*time.Millisecond, "rounds sent untimed at the start of each turn (at least one)")
	flag.Parse()
	targets := strings.Split(*urls, ",")
	filterGroups := strings.Split(*filters, ";")
	prioritizeGroups := strings.Split(*prioritizes, ";")
	var err error
	if len(filterGroups) != len(prioritizeGroups) || len(filterGroups) != 1 && len(filterGroups) != len(targets) {
		err = fmt.Errorf("-filter holds %d groups, -prioritize %d, for %d extenders: one group, or one per extender",
			len(filterGroups), len(prioritizeGroups), len(targets))
	}
	filterBodies := make([][][]byte, len(filterGroups))
	prioritizeBodies := make([][][]byte, len(filterGroups))
	for g := 0; err == nil && g < len(filterGroups); g++ {
		filterBodies[g], err = read(filterGroups[g])
		if err == nil && len(filterBodies[g]) == 0 {
			err = fmt.Errorf("-filter names no file")
		}
		if err == nil {
			prioritizeBodies[g], err = read(prioritizeGroups[g])
		}
		if err == nil && len(prioritizeBodies[g]) != len(filterBodies[g]) {
			err = fmt.Errorf("-prioritize names %d files, -filter %d", len(prioritizeBodies[g]), len(filterBodies[g]))
		}
	}
	if err == nil && (*urls == "" || *slice <= 0) {
		err = fmt.Errorf("-url names no extender, or -slice is not positive")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "extender-client:", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	extenders := make([]*extender, len(targets))
	for t, url := range targets {
		// As kube-scheduler's HTTPExtender builds its client: k8s.io/apimachinery's SetTransportDefaults over a plain
		// Transport (plain HTTP here), whose idle connections are kept for the next call.
		group := 0
		if len(filterBodies) > 1 {
			group = t
		}
		extenders[t] = &extender{url: url, filterBodies: filterBodies[group], prioritizeBodies: prioritizeBodies[group], client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 25,
			IdleConnTimeout: 90 * time.Second}, Timeout: 30 * time.Second}}
	}
	for _, e := range extenders {
		warmUntil := time.Now().Add(*warmup)
		for i := 0; i < 3 || time.Now().Before(warmUntil); i++ {
			e.round()
		}
	}
	if *seconds > 0 {
		budget := time.Duration(*seconds * float64(time.Second))
		for more := true; more; {
			more = false
			for t, e := range extenders {
				if e.timed >= budget && e.rounds >= 10 {
					continue
				}
				more = true
				// The other extender's turn left the caches to it, and this one asleep: timed from the first round
				// after, as the whole turn once was, that change of hands would set the tail.
				rewarmUntil := time.Now().Add(*rewarm)
				for first := true; first || time.Now().Before(rewarmUntil); first = false {
					e.round()
				}
				until := time.Now().Add(*slice)
				for time.Now().Before(until) && (e.timed < budget || e.rounds < 10) {
					filter, prioritize := e.round()
					e.timed += filter + prioritize
					e.rounds++
					fmt.Fprintf(out, "%d %d %d\n", t, filter.Nanoseconds(), prioritize.Nanoseconds())
				}
			}
		}
	}
	for t, e := range extenders {
		fmt.Fprintf(out, "bytes %d %d %d\n", t, e.filterBytes, e.prioritizeBytes)
	}
}

// extender is one extender's connection, its turn's rounds so far and the sizes of its last answers.
type extender struct {
	url                          string
	filterBodies                 [][]byte
	prioritizeBodies             [][]byte
	client                       *http.Client
	next, rounds                 int
	timed                        time.Duration
	filterBytes, prioritizeBytes int64
}

// round sends the next filter and its prioritize; how long each took.
func (e *extender) round() (time.Duration, time.Duration) {
	which := e.next % len(e.filterBodies)
	e.next++
	start := time.Now()
	e.filterBytes = post(e.client, e.url+"/filter", e.filterBodies[which])
	filtered := time.Now()
	e.prioritizeBytes = post(e.client, e.url+"/prioritize", e.prioritizeBodies[which])
	return filtered.Sub(start), time.Since(filtered)
}

func read(files string) ([][]byte, error) {
	var bodies [][]byte
	for _, file := range strings.Split(files, ",") {
		if file == "" {
			continue
		}
		body, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, body)
	}
	return bodies, nil
}

// post sends one call as kube-scheduler's HTTPExtender.send does and reads the answer whole; its size.
func post(client *http.Client, url string, body []byte) int64 {
	request, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		fail(err)
	}
	request.Header.Set("Content-Type", "application/json")
	response, err := client.Do(request)
	if err != nil {
		fail(err)
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		answer, _ := io.ReadAll(io.LimitReader(response.Body, 300))
		fail(fmt.Errorf("%s answered %d: %s", url, response.StatusCode, answer))
	}
	size, err := io.Copy(io.Discard, response.Body)
	if err != nil {
		fail(err)
	}
	return size
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "extender-client:", err)
	os.Exit(1)
}
