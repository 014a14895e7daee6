package main

import (
	"os"
	"testing"

	"github.com/nettune/nettune/internal/testutil"
)

// The package's tests that run real Tomcat, sshd or a container take most
// of the gate's time, and most of a study's time is spent waiting: on a
// JVM starting, on fixed-length load runs. They run in four lanes, each a
// parallel top-level test whose subtests run one after another:
//
//   - TestTomcatCopy: studies of copies of Debian's instance
//     (tomcatBase), each in its own CATALINA_BASE, on its own port, with
//     its own journal and state lock;
//   - TestIntegrationNamespaces: studies whose server or load runs in the
//     network namespaces of newStudyNetNS (fixed interface names, one pair
//     at a time), then three of the copied instance's, which balance the
//     lanes (a gate run: 192 s for this lane, 418 s for TestTomcatCopy);
//   - TestPackaged: Debian's tomcat10 as installed (/var/lib/tomcat10);
//   - TestIntegrationContainer: the booted Debian container.
//
// The lanes share only the CPUs. Each test that needs the online CPUs to
// hold still takes testutil.StableCPUs. The hotplug study
// (TestApplyHotplug) is not in a lane: its exclusive CPU lock would wait
// for every lane's test in progress, and hold every lane's next test back
// meanwhile (a gate run lost two minutes so). It runs before the lanes
// with the package's other sequential tests, and .ci/test runs it, with
// the other packages' hotplug tests, in a stage after go test.
// Assertions in the lanes are on properties that hold however busy the
// CPUs are (counts, files, processes, a change undone), never on a
// figure's size; the test that reads the load generator's own CPU
// (TestIntegrationLoadBoundWorker) is not in a lane either.
// .ci/test runs go test with -parallel 4, so the four run together; with
// go test's default (-parallel GOMAXPROCS) as many as there are CPUs.
// One test alone: -run 'TestTomcatCopy/ApplyAffinityRevert$'.

// TestMain gives the JVMs this package's tests start the cheap options
// of testutil.SetTestJVMOptions (C1 only): testApplyAffinityRevert alone,
// on an idle host, ran 66 s with C2 and 52 s without (Tomcat ready in
// 4.8 s against 2.6 s; the host's busy CPU 65 s against 48 s), and the
// package's tests in a gate run 541 s against 408 s.
func TestMain(m *testing.M) {
	testutil.SetTestJVMOptions()
	os.Exit(m.Run())
}

// TestTomcatCopy is the lane of the studies of a copied instance.
func TestTomcatCopy(t *testing.T) {
	t.Parallel()
	t.Run("PlanWithoutTomcat", testPlanWithoutTomcat)
	t.Run("ApplyRefusesBadTargetFirst", testApplyRefusesBadTargetFirst)
	t.Run("ApplyAffinityRevert", testApplyAffinityRevert)
	t.Run("ApplyCapacityTable", testApplyCapacityTable)
	t.Run("KeepThenRevertRestartsTomcat", testKeepThenRevertRestartsTomcat)
	t.Run("ConcurrentApplyRefused", testConcurrentApplyRefused)
	t.Run("ApplySearchesFromTheRule", testApplySearchesFromTheRule)
}

// TestIntegrationNamespaces is the lane of the studies in network
// namespaces and over ssh, and of three on a copied instance.
func TestIntegrationNamespaces(t *testing.T) {
	t.Parallel()
	t.Run("StudyNICQueuesNetNS", testStudyNICQueuesNetNS)
	t.Run("LoadNetNSCancel", testLoadNetNSCancel)
	t.Run("LoadNetNSStudyKilled", testLoadNetNSStudyKilled)
	t.Run("StudyLoadHostSSH", testStudyLoadHostSSH)
	t.Run("LoadHostFailures", testLoadHostFailures)
	t.Run("LoadHostKillThenRevert", testLoadHostKillThenRevert)
	t.Run("LoadHostWorkerKilled", testLoadHostWorkerKilled)
	t.Run("StudyTwoClients", testStudyTwoClients)
	t.Run("LoadHostNetworkCut", testLoadHostNetworkCut)
	t.Run("KillThenRevert", testKillThenRevert)
	t.Run("SecondSignalKeepsJournal", testSecondSignalKeepsJournal)
	t.Run("ApplyPersistRevert", testApplyPersistRevert)
}
