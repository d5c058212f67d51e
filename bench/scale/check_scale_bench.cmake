# ctest scale_bench_smoke: runs scale_bench at a small size and checks that it succeeds and that
# its JSON report carries every field as a number (no timing asserts: the machine is shared).
execute_process(
  COMMAND ${BENCH} --pending 300 --running 60 --passes 4 --interval-ms 250 --rate 100
          --log-rate 100000 --churn 5 --history 100 --threads 4
          --big-page-ms 200
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 100)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "scale_bench exited with ${rc}\n${err}")
endif()
string(STRIP "${out}" out)
string(JSON type ERROR_VARIABLE json_error TYPE "${out}")
if(json_error OR NOT type STREQUAL "OBJECT")
  message(FATAL_ERROR "scale_bench did not print one JSON object: ${json_error}\n${out}")
endif()
set(fields pending running nodes history_jobs squeue_bytes setup_s first_pass_s passes
    pass_errors pass_median_s pass_p95_s pass_max_s pass_cpu_median_s pass_cpu_p95_s interval_s log_bytes_written log_bytes_per_s
    jobs_in_view tracked_logs runs_finished runs_failed failures_recorded rss_setup_mib
    rss_end_mib peak_rss_first_pass_mib peak_rss_mib api_rate process_cpu_cores machine_load_1m api_requests api_errors api_p50_ms api_p99_ms api_max_ms
    api_requests_during_pass api_p50_during_pass_ms api_p99_during_pass_ms)
foreach(f ${fields})
  string(JSON t ERROR_VARIABLE e TYPE "${out}" ${f})
  if(e OR NOT t STREQUAL "NUMBER")
    message(FATAL_ERROR "scale_bench report: field ${f} missing or not a number\n${out}")
  endif()
endforeach()
# What the run must have done: every job in the view, the running jobs' logs tailed, passes
# made and requests answered on each route.
foreach(pair "pending;300" "running;60" "passes;3" "pass_errors;0" "api_errors;0")
  list(GET pair 0 f)
  list(GET pair 1 want)
  string(JSON got GET "${out}" ${f})
  if(NOT got EQUAL want)
    message(FATAL_ERROR "scale_bench report: ${f} = ${got}, expected ${want}\n${out}")
  endif()
endforeach()
# One tailed log per running job: none kept for the runs that ended (5 per pass).
string(JSON tracked GET "${out}" tracked_logs)
string(JSON finished GET "${out}" runs_finished)
string(JSON requests GET "${out}" api_requests)
string(JSON written GET "${out}" log_bytes_written)
if(NOT tracked EQUAL 60 OR NOT finished EQUAL 15 OR requests LESS 100 OR written LESS 1000)
  message(FATAL_ERROR "scale_bench: ${tracked} logs tailed (want 60), ${finished} runs ended "
                      "(want 15), ${requests} requests, ${written} log bytes\n${out}")
endif()
foreach(route "/v1/jobs" "/v1/jobs/{id}" "/metrics" "/healthz" "/v1/jobs?limit=5000")
  string(JSON n ERROR_VARIABLE e GET "${out}" api_routes "${route}" requests)
  if(e OR n LESS 1)
    message(FATAL_ERROR "scale_bench report: no requests on ${route}\n${out}")
  endif()
endforeach()
message(STATUS "scale_bench smoke: ${out}")
