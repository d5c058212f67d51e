# Warnings for project targets: call schedmate_warnings(<target>).
function(schedmate_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wnon-virtual-dtor
                                           -Wno-missing-field-initializers
                                           $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>
                                           $<$<CXX_COMPILER_ID:Clang>:-Wshadow>)
endfunction()

# schedmate_library(<name> SOURCES ... DEPS ...): a component library schedmate_<name>.
function(schedmate_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(schedmate_${name} STATIC ${ARG_SOURCES})
  target_include_directories(schedmate_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(schedmate_${name} PUBLIC ${ARG_DEPS})
  schedmate_warnings(schedmate_${name})
  schedmate_unity(schedmate_${name})
endfunction()

# schedmate_test(<name> SOURCES ... DEPS ...): one gtest binary, cases registered with ctest.
function(schedmate_test name)
  cmake_parse_arguments(ARG "" "PREFIX" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} schedmate_testing GTest::gtest GTest::gmock GTest::gtest_main)
  schedmate_warnings(${name})
  target_compile_definitions(${name} PRIVATE
      SCHEDMATE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      SCHEDMATE_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data")
  set(labels unit)
  if(ARG_LABELS)
    set(labels ${ARG_LABELS})
  endif()
  # gtest_discover_tests (CMake 3.25) flattens a list of labels into separate properties, so
  # several labels become ONE joined label ("integration_llama"). ctest's -L/-LE take regular
  # expressions matched anywhere in a label, so `-L llama`, `-L integration` and
  # `-LE 'slurm|llama'` all still select it.
  list(JOIN labels "_" joined_label)
  # PREFIX tells apart binaries that run the same cases (the store tests on each backend).
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_PREFIX "${ARG_PREFIX}"
                       PROPERTIES LABELS "${joined_label}")
endfunction()
