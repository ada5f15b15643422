# Test setup for tests/math (the ctest fixture "math_vectors"): installs the pinned @noble/curves
# with npm into the build tree and runs generate.mjs with a fixed seed.
#
#   cmake -DSOURCE_DIR=<tests/vectors> -DWORK_DIR=<build dir> -DSEED=<integer> -DOUTPUT=<file.json>
#         -P prepare.cmake
#
# Missing node or npm is an error, not a skip: without the vectors the math is unchecked.
foreach(variable SOURCE_DIR WORK_DIR SEED OUTPUT)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "prepare.cmake: -D${variable}=... is required")
  endif()
endforeach()

find_program(NODE_EXECUTABLE NAMES node nodejs)
find_program(NPM_EXECUTABLE NAMES npm)
if(NOT NODE_EXECUTABLE OR NOT NPM_EXECUTABLE)
  message(FATAL_ERROR
    "The math tests need Node.js (18 or later) and npm on PATH to generate their vectors from @noble/curves "
    "(node: ${NODE_EXECUTABLE}, npm: ${NPM_EXECUTABLE}). Install them, e.g. `apt-get install nodejs npm`, "
    "and run the tests again.")
endif()
execute_process(COMMAND "${NODE_EXECUTABLE}" --version OUTPUT_VARIABLE node_version OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX MATCH "^v([0-9]+)" _ "${node_version}")
if(NOT CMAKE_MATCH_1 OR CMAKE_MATCH_1 LESS 18)
  message(FATAL_ERROR "The math test vectors need Node.js 18 or later; found '${node_version}' at ${NODE_EXECUTABLE}")
endif()

file(MAKE_DIRECTORY "${WORK_DIR}")
foreach(name package.json package-lock.json generate.mjs)
  file(COPY_FILE "${SOURCE_DIR}/${name}" "${WORK_DIR}/${name}" ONLY_IF_DIFFERENT)
endforeach()

# npm ci only when the lock file changed since the last install: it wipes node_modules and, on a
# cold cache, needs the registry.
file(SHA256 "${WORK_DIR}/package-lock.json" lock_hash)
set(install_stamp "${WORK_DIR}/node_modules/.stagehand-lock-sha256")
set(installed_hash "")
if(EXISTS "${install_stamp}")
  file(READ "${install_stamp}" installed_hash)
endif()
if(NOT installed_hash STREQUAL lock_hash)
  message(STATUS "Installing @noble/curves with npm ci into ${WORK_DIR}")
  execute_process(COMMAND "${NPM_EXECUTABLE}" ci --no-audit --no-fund
                  WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE npm_result)
  if(NOT npm_result EQUAL 0)
    message(FATAL_ERROR "npm ci failed (${npm_result}) in ${WORK_DIR}: the math tests need @noble/curves from the "
                        "npm registry (or npm's cache); check network access")
  endif()
  file(WRITE "${install_stamp}" "${lock_hash}")
endif()

# The vectors are a pure function of the generator, the lock file and the seed: regenerate only
# when one of them changed.
file(SHA256 "${WORK_DIR}/generate.mjs" generator_hash)
set(vector_key "${generator_hash} ${lock_hash} ${SEED} ${node_version}")
set(vector_stamp "${OUTPUT}.key")
set(existing_key "")
if(EXISTS "${vector_stamp}" AND EXISTS "${OUTPUT}")
  file(READ "${vector_stamp}" existing_key)
endif()
if(existing_key STREQUAL vector_key)
  message(STATUS "Math vectors up to date: ${OUTPUT}")
  return()
endif()
# Remove the old vectors first, so that a failed generation cannot leave stale ones behind.
file(REMOVE "${vector_stamp}" "${OUTPUT}")
execute_process(COMMAND "${NODE_EXECUTABLE}" "${WORK_DIR}/generate.mjs" --seed "${SEED}" --output "${OUTPUT}"
                WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE generate_result)
if(NOT generate_result EQUAL 0)
  message(FATAL_ERROR "generate.mjs failed (${generate_result}): no math vectors")
endif()
file(WRITE "${vector_stamp}" "${vector_key}")
