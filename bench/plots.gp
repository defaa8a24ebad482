# bench/plots.gp — the benchmark's plots, from the data files fnbench
# writes into `dir` (gnuplot -e "dir='build/bench'" bench/plots.gp):
#   throughput.dat   "label" records/s ceiling-or-bound   -> throughput.png
#   latency*.dat     latency_ms cumulative_fraction       -> latency.png (W8)
#   rss.dat          seconds RSS_MB                       -> rss.png (W9 flood)
# A plot whose data file is missing (a partial --only run) is skipped.
if (!exists("dir")) dir = "build/bench"
have(f) = int(system("[ -s '".dir."/".f."' ] && echo 1 || echo 0"))
set terminal pngcairo size 1100,600 font ",10" noenhanced

if (have("throughput.dat")) {
  set output dir."/throughput.png"
  set title "fnworker throughput per workload (worker vs null-worker ceiling, or the operation's bound for W5/W6)"
  set style data histograms
  set style histogram clustered gap 1
  set style fill solid 0.8 border -1
  set logscale y
  set ylabel "records/s (log)"
  set xtics rotate by -35 scale 0
  set grid ytics
  set key top right
  plot dir."/throughput.dat" using 2:xtic(1) title "fnworker", \
       ""                    using 3 title "ceiling / bound"
  unset logscale y
  set style data lines
  set xtics norotate
}

if (have("latency.dat") && have("latency_timeout.dat")) {
  set output dir."/latency.png"
  set title "W8: latency from the driver sending a record to receiving its result (10k records/s)"
  set xlabel "latency (ms)"
  set ylabel "fraction of records"
  set yrange [0:1.02]
  set xrange [0:*]
  set grid
  set key bottom right
  set arrow 1 from 10, graph 0 to 10, graph 1 nohead dt 2 lc rgb "red"
  set label 1 "target p99 10 ms" at 10.3, graph 0.05 tc rgb "red"
  plot dir."/latency.dat" using 1:2 with lines lw 2 title "W2's op (no batch timeout)", \
       dir."/latency_timeout.dat" using 1:2 with lines lw 2 title "W2's op + batch_timeout_ms 2"
  unset arrow 1
  unset label 1
}

if (have("rss.dat")) {
  set output dir."/rss.png"
  set title "W9: worker RSS while the runner floods 1 KB records into a 10 ms operation (capacity 10,000)"
  set xlabel "seconds"
  set ylabel "RSS (MB)"
  set yrange [0:*]
  set xrange [0:*]
  set key bottom right
  set arrow 2 from graph 0, first 64 to graph 1, first 64 nohead dt 2 lc rgb "red"
  plot dir."/rss.dat" using 1:2 with lines lw 2 title "VmRSS"
}
