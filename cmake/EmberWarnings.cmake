# Warnings for ember's own targets (not for third-party headers, which are included as SYSTEM).
function(ember_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
endfunction()
