"""cc_headers_only: the compile-time half of C++ libraries (headers, include paths, defines).

Code that links the runtime as a shared library (liboneflow_like_runtime.so) still needs the
runtime's headers; depending on the runtime's cc_library targets directly would also link their
object files, giving that code a second copy of the runtime. This rule keeps each dependency's
CcInfo compilation context and drops its linking context.
"""

def _cc_headers_only_impl(ctx):
    merged = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps])
    return [CcInfo(compilation_context = merged.compilation_context)]

cc_headers_only = rule(
    implementation = _cc_headers_only_impl,
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
    doc = "The headers, include paths and defines of `deps`, without their objects or libraries.",
)
