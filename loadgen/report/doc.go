// Package report renders a loadgen run for people and for other programs:
// wrk2's text layout ([WriteWrk], [WriteWrkHeader]), ApacheBench's
// ([WriteAB], [WriteABHeader]), the result JSON with every number and
// each histogram in HdrHistogram's compressed encoding ([WriteJSON], read
// back by [ReadResultJSON]), and SVG charts ([PlotPercentiles],
// [PlotThroughput], [PlotCapacity], [PlotSteps]). [FormatDuration],
// [FormatTimeUS] and [Percent] are the number formats the reports and
// loadgen's tables use.
//
// report imports loadgen; loadgen never imports report, so the engine
// carries no report code. The result JSON is read here too, not in
// loadgen: the engine never reads it, and a program that moves a Result
// between processes (a load worker in another namespace or on another
// host) writes it with WriteJSON and reads it with ReadResultJSON, so the
// one wire form of a Result and its test sit in one place. What the engine
// itself needs to move load between processes stays in loadgen: a
// Config's wire form (loadgen.WriteConfigJSON, loadgen.ReadConfigJSON)
// and the HdrHistogram interval logs that Config.OnInterval writes and
// loadgen.MergeHlogs merges.
//
// Nothing here touches the host: every function writes to the io.Writer
// it is given.
package report
