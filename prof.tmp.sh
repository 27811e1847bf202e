ALL=heatmap_cells,alert_cells,daily_events,build_days,compare_days
for keep in heatmap_cells; do
  drop=$(echo $ALL | tr ',' '\n' | grep -v -x -F "$(echo $keep | tr ',' '\n')" | paste -sd,)
  node try2.tmp.mjs "$drop" 2>&1 | grep insert | sed "s/^/keep=$keep /"
done
