// Every child Python starts while setup() runs (cmake, which starts ninja
// and the compilers; auditwheel; strip; git) goes through subprocess.Popen.
// Its __init__ is wrapped so that the child gets its own session, hence its
// own process group, registered for the stop signals (stop_signals.hpp): a
// SIGINT, SIGTERM or SIGHUP to ascend-setup stops the whole build, not only
// the Python code. A caller that chose start_new_session, process_group or
// preexec_fn itself is left alone. Needs a running interpreter.
#pragma once

namespace ascend_setup {

void track_python_children();

}  // namespace ascend_setup
