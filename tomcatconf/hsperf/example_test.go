package hsperf_test

import (
	"fmt"
	"log"

	"github.com/nettune/nettune/tomcatconf/hsperf"
)

// The figures of a JVM's counters: a real file of OpenJDK 17 with G1, as
// hsperf.Read(pid, nil) would read it from the running JVM. Two readings
// around a measurement give what happened during it: after.Sub(before).
func ExampleSnapshot_Figures() {
	s, err := hsperf.ReadFile("testdata/openjdk17-g1.hsperf")
	if err != nil {
		log.Fatal(err)
	}
	f, err := s.Figures()
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range f.Collectors {
		fmt.Printf("%-28s %4d collections %s\n", c.Name, c.Collections, c.Time)
	}
	n, pause := f.GC()
	fmt.Printf("all: %d collections, %s paused; JIT %s; %d threads\n", n, pause, f.Compile, f.Threads)
	// Output:
	// G1 young collection pauses    530 collections 593.572557ms
	// G1 full collection pauses       5 collections 21.837777ms
	// G1 concurrent cycle pauses    185 collections 37.711724ms
	// all: 720 collections, 653.122058ms paused; JIT 46.074816ms; 6 threads
}
