// extender-floor is what the cheapest scheduler extender written in Go costs: it reads kube-scheduler's
// request into Go values with encoding/json, keeps every node, gives every node score 0 and writes the
// answer with encoding/json, all through net/http. It places nothing. hetgpu's extender benchmark runs it
// beside hetgpu's extender with the same requests and reports hetgpu's latency as a ratio to it.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
)

// The pod as an extender must read it to decide anything: who it is and what it asks for. The rest of
// the object is skipped by the decoder, as it would be by any extender that declares only what it uses.
type pod struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		UID         string            `json:"uid"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		SchedulerName string `json:"schedulerName"`
		Priority      *int32 `json:"priority"`
		Containers    []struct {
			Resources struct {
				Limits   map[string]string `json:"limits"`
				Requests map[string]string `json:"requests"`
			} `json:"resources"`
		} `json:"containers"`
	} `json:"spec"`
}

// A node is handed back as it came (nodeCacheCapable: false); only its name is read.
type node struct {
	raw  json.RawMessage
	name string
}

func (n *node) UnmarshalJSON(data []byte) error {
	var head struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	n.raw = append(json.RawMessage(nil), data...)
	n.name = head.Metadata.Name
	return nil
}

func (n node) MarshalJSON() ([]byte, error) { return n.raw, nil }

type nodeList struct {
	Items []node `json:"items"`
}

// k8s.io/kube-scheduler/extender/v1's ExtenderArgs, ExtenderFilterResult and HostPriority, field for field.
type extenderArgs struct {
	Pod       *pod      `json:"pod"`
	Nodes     *nodeList `json:"nodes,omitempty"`
	NodeNames *[]string `json:"nodenames,omitempty"`
}

type filterResult struct {
	Nodes                      *nodeList         `json:"nodes,omitempty"`
	NodeNames                  *[]string         `json:"nodenames,omitempty"`
	FailedNodes                map[string]string `json:"failedNodes,omitempty"`
	FailedAndUnresolvableNodes map[string]string `json:"failedAndUnresolvableNodes,omitempty"`
	Error                      string            `json:"error,omitempty"`
}

type hostPriority struct {
	Host  string `json:"host"`
	Score int64  `json:"score"`
}

func read(w http.ResponseWriter, r *http.Request) (*extenderArgs, bool) {
	var args extenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return &args, true
}

func write(w http.ResponseWriter, answer any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(answer); err != nil {
		log.Printf("answer not written: %v", err)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:18888", "address to listen on")
	flag.Parse()
	http.HandleFunc("/filter", func(w http.ResponseWriter, r *http.Request) {
		if args, ok := read(w, r); ok {
			write(w, filterResult{Nodes: args.Nodes, NodeNames: args.NodeNames})
		}
	})
	http.HandleFunc("/prioritize", func(w http.ResponseWriter, r *http.Request) {
		args, ok := read(w, r)
		if !ok {
			return
		}
		scores := []hostPriority{}
		if args.NodeNames != nil {
			for _, name := range *args.NodeNames {
				scores = append(scores, hostPriority{Host: name})
			}
		} else if args.Nodes != nil {
			for _, n := range args.Nodes.Items {
				scores = append(scores, hostPriority{Host: n.name})
			}
		}
		write(w, scores)
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
