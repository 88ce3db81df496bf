# Per-target warnings (no global flags). hetsim_warnings(target) turns them on.
function(hetsim_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12 reports false -Wrestrict in libstdc++'s std::string operator+ at -O2/-O3
    # (GCC bug 105651, fixed in 13); it fires on correct code such as `"-" + std::to_string(i)`.
    # Likewise false -Wmaybe-uninitialized on copies of structs holding a short std::string
    # (GCC bug 107919). Both stay on with GCC 13 and clang.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict -Wno-maybe-uninitialized>)
  endif()
  if(HETSIM_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
