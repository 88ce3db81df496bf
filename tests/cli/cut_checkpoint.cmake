# SPDX-License-Identifier: Apache-2.0
# cut_checkpoint(PATH KEEP MIN_RECORDS TOTAL_VAR): what a kill leaves of a JSON-lines checkpoint.
# Keeps its first KEEP records and half of the next one (a kill while writing it); fails when the
# file has fewer than MIN_RECORDS records, and sets TOTAL_VAR to how many it had.
function(cut_checkpoint path keep min_records total_var)
  file(STRINGS ${path} records)
  list(LENGTH records total)
  if(total LESS min_records OR total LESS_EQUAL keep)
    message(FATAL_ERROR "the checkpoint ${path} has ${total} records; the job should write at least ${min_records}")
  endif()
  list(SUBLIST records 0 ${keep} kept)
  list(GET records ${keep} next)
  string(LENGTH "${next}" n)
  math(EXPR half "${n} / 2")
  string(SUBSTRING "${next}" 0 ${half} cut)
  list(JOIN kept "\n" text)
  file(WRITE ${path} "${text}\n${cut}")
  set(${total_var} ${total} PARENT_SCOPE)
endfunction()
