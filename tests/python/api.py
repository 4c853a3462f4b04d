# The module's own functions under the probe, without torch: spans and steps
# nest, updates count from 1, phases, a mark of several ranges, a device
# checkpoint and a named thread reach the trace. Prints one "name value"
# line per fact for the test to check.
import threading

import cgprobe

print("enabled", int(cgprobe.enabled()))
with cgprobe.update() as n:
    print("update", n)
    with cgprobe.span("outer", kind="module"):
        with cgprobe.step("forward"):
            buf = bytearray(300000)
print("after", cgprobe.update_number())
print("next", cgprobe.next_update())
print("next", cgprobe.next_update())
cgprobe.end_update()


@cgprobe.span("apply", step="optimizer")
def apply():
    return bytearray(200000)


kept = apply()
print("checkpoint", cgprobe.device_checkpoint("cuda:0", 1000, 9000, 800, 600))


def worker():
    cgprobe.thread_name("loader-0")
    with cgprobe.step("backward"):
        global grad
        grad = bytearray(100000)


t = threading.Thread(target=worker)
t.start()
t.join()
try:
    cgprobe.span("x", step="side ways")
    print("bad-step accepted")
except ValueError:
    print("bad-step refused")

# Phases other than the steps: a span named after one, or around a span of another name.
with cgprobe.phase("data"):
    batch = bytearray(150000)
with cgprobe.span("load", step="io"):
    pass


@cgprobe.phase("evaluate")
def evaluate():
    return 1


evaluate()
for bad in ("da ta", "none", None, "x" * 32):
    try:
        cgprobe.phase(bad)
        print("bad-phase accepted", bad)
    except ValueError:
        pass
sid = cgprobe.begin_span("read", step="io")
print("phase-span", int(sid != 0))
print("phase-end", cgprobe.end_span(sid))
# Parameters: two ranges in one mark, at addresses no allocation takes.
print("many", cgprobe.mark_parameters_many([(0x10000, 0x100), (0x20000, 0x200), (0, 5)]))
print("many-none", cgprobe.mark_parameters_many([]))
print("flush", cgprobe.flush())
