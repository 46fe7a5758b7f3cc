# The provider door holds (provider/provider.h): no host source outside host/provider/ calls into a
# plugin's function table, spelled `plugin().<member>` or `plugin()-><member>`.
#
#   cmake -DEPHOST_HOST_DIR=<host folder> [-DEPHOST_ONE_DOOR_STAMP=<file>] -P one_door_check.cmake
#
# Fails naming each offending line. It refuses to pass without having read the host: the folder must
# hold host/provider/ and the host's other subsystems, and every source it scanned is counted. On
# success it writes EPHOST_ONE_DOOR_STAMP (when given), so that the build runs it again only when a
# host source changes (host/CMakeLists.txt), and prints what it scanned (the CTest test shows it).
cmake_minimum_required(VERSION 3.16)

if(NOT EPHOST_HOST_DIR OR NOT IS_DIRECTORY "${EPHOST_HOST_DIR}")
  message(FATAL_ERROR "one_door_check: EPHOST_HOST_DIR must name the host source folder (given: '${EPHOST_HOST_DIR}')")
endif()

file(GLOB_RECURSE sources LIST_DIRECTORIES false "${EPHOST_HOST_DIR}/*.cpp" "${EPHOST_HOST_DIR}/*.h")
set(scanned 0)
set(scanned_in_door 0)
set(folders "")
set(violations "")
foreach(file IN LISTS sources)
  file(RELATIVE_PATH relative "${EPHOST_HOST_DIR}" "${file}")
  string(REGEX REPLACE "/.*" "" folder "${relative}")
  list(APPEND folders "${folder}")
  math(EXPR scanned "${scanned} + 1")
  if(folder STREQUAL "provider")
    math(EXPR scanned_in_door "${scanned_in_door} + 1")
    continue()
  endif()
  file(STRINGS "${file}" lines REGEX "plugin\\(\\)(\\.|->)")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    string(APPEND violations "\n  host/${relative}: ${line}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES folders)
list(LENGTH folders folder_count)

# Not vacuous: the door itself and at least the subsystems that call it (compile, exec, epcontext,
# session) were read.
if(scanned_in_door EQUAL 0)
  message(FATAL_ERROR "one_door_check: no source of host/provider/ under ${EPHOST_HOST_DIR}: this is not the host "
                      "folder, or the door moved (update host/provider/one_door_check.cmake)")
endif()
foreach(needed IN ITEMS compile exec epcontext session)
  if(NOT needed IN_LIST folders)
    message(FATAL_ERROR "one_door_check: no source of host/${needed}/ under ${EPHOST_HOST_DIR}: the check would not "
                        "see the code that calls providers")
  endif()
endforeach()

if(violations)
  message(FATAL_ERROR "one_door_check: plugin code is called outside host/provider/, the one door to a provider "
                      "(design.md, \"One door to a provider\"). Add a typed method to Provider "
                      "(host/provider/provider.h) and call that instead:${violations}")
endif()

message(STATUS "one_door_check: ${scanned} host sources in ${folder_count} folders scanned "
               "(${scanned_in_door} in provider/); no plugin call outside host/provider/")
if(EPHOST_ONE_DOOR_STAMP)
  file(WRITE "${EPHOST_ONE_DOOR_STAMP}" "${scanned} host sources scanned\n")
endif()
