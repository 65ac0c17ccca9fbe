// extender-client sends kube-scheduler's filter and prioritize calls to one extender as kube-scheduler's own
// HTTPExtender sends them: Go's net/http client over one kept-alive connection, a request body of JSON bytes with
// Content-Type application/json, one call at a time, filter then prioritize. It reads each answer whole and does
// not decode it (kube-scheduler decodes it with encoding/json, a cost of kube-scheduler's, not the extender's).
// hetgpu's extender benchmark runs it against hetgpu's extender and against the Go floor, and reads the times of
// each round from its output: one line per round, "filter-ns prioritize-ns", then "bytes filter-bytes prioritize-bytes".
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
	url := flag.String("url", "", "the extender, e.g. http://127.0.0.1:18899")
	filters := flag.String("filter", "", "files holding filter request bodies, comma-separated: round i sends body i mod n")
	prioritizes := flag.String("prioritize", "", "files holding prioritize request bodies, as many as -filter")
	warmup := flag.Duration("warmup", 5*time.Second, "rounds sent first and not timed (at least 3)")
	seconds := flag.Float64("seconds", 10, "seconds of timed rounds (at least 10 rounds); 0 times none")
	flag.Parse()
	filterBodies, err := read(*filters)
	if err == nil && len(filterBodies) == 0 {
		err = fmt.Errorf("-filter names no file")
	}
	var prioritizeBodies [][]byte
	if err == nil {
		prioritizeBodies, err = read(*prioritizes)
	}
	if err == nil && len(prioritizeBodies) != len(filterBodies) {
		err = fmt.Errorf("-prioritize names %d files, -filter %d", len(prioritizeBodies), len(filterBodies))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "extender-client:", err)
		os.Exit(2)
	}
	// As kube-scheduler's HTTPExtender builds its client: k8s.io/apimachinery's SetTransportDefaults over a plain
	// Transport (plain HTTP here), whose idle connections are kept for the next call.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 25, IdleConnTimeout: 90 * time.Second}, Timeout: 30 * time.Second}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var filterBytes, prioritizeBytes int64
	round := func(i int) (time.Duration, time.Duration) {
		which := i % len(filterBodies)
		start := time.Now()
		filterBytes = post(client, *url+"/filter", filterBodies[which])
		filtered := time.Now()
		prioritizeBytes = post(client, *url+"/prioritize", prioritizeBodies[which])
		return filtered.Sub(start), time.Since(filtered)
	}
	warmUntil := time.Now().Add(*warmup)
	for i := 0; i < 3 || time.Now().Before(warmUntil); i++ {
		round(i)
	}
	if *seconds > 0 {
		until := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
		for i := 0; i < 10 || time.Now().Before(until); i++ {
			filter, prioritize := round(i)
			fmt.Fprintf(out, "%d %d\n", filter.Nanoseconds(), prioritize.Nanoseconds())
		}
	}
	fmt.Fprintf(out, "bytes %d %d\n", filterBytes, prioritizeBytes)
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
