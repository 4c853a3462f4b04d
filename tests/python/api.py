# The module's own functions under the probe, without torch: spans and steps
# nest, updates count from 1, a device checkpoint and a named thread reach
# the trace. Prints one "name value" line per fact for the test to check.
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
    cgprobe.span("x", step="sideways")
    print("bad-step accepted")
except ValueError:
    print("bad-step refused")
print("flush", cgprobe.flush())
