// Package report renders a loadgen run for people and for other programs:
// wrk2's text layout ([WriteWrk], [WriteWrkHeader]), ApacheBench's
// ([WriteAB], [WriteABHeader]), the result JSON with every number and
// each histogram in HdrHistogram's compressed encoding ([WriteJSON], read
// back by [ReadResultJSON]), and SVG charts ([PlotPercentiles],
// [PlotThroughput], [PlotCapacity], [PlotSteps]). [FormatDuration],
// [FormatTimeUS] and [Percent] are the number formats the reports and
// loadgen's tables use.
//
// HdrHistogram interval logs (.hlog, format 1.3) are a report too:
// [HlogRecorder], used as loadgen.Config.OnInterval, writes one interval
// per second tagged [TagCorrected], [TagUncorrected] and [TagLag], which
// HdrHistogram's own tools read; [ReadHlog] reads a log back and
// [MergeHlogs] unions the logs of several generators (loadgen.Config.Shard)
// losslessly.
//
// report imports loadgen; loadgen never imports report, so the engine
// carries no report code. What moves results between processes is here
// too, by that rule: the engine never reads a result or a log, and a
// program that runs load elsewhere (a worker in another namespace or on
// another host, or n shards) writes a Result with [WriteJSON] and reads it
// back with [ReadResultJSON], and merges the shards' logs with
// [MergeHlogs]. Only a Config's wire form (loadgen.WriteConfigJSON,
// loadgen.ReadConfigJSON) stays in loadgen, beside the Config it carries.
//
// Nothing here touches the host: every function writes to the io.Writer
// it is given.
package report
