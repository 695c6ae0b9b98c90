# D[loop_with_if]: the primal result and its backpropagator
def loop_with_if_chad(x, scale):
    s = 0.0  # line 20: s = 0.0
    # line 21: for i in range(3):
    indices = range(3)
    s_1 = s
    tape = []  # one record per iteration
    for i in indices:  # D[loop]: forward iterations
        sin, power = (None, None)  # set on one path only
        # line 22: if x > i:
        cond = x > i
        if cond:  # D[case]
            # line 23: s = s + scale * math.sin(x) ** 2
            sin = math.sin(x)
            power = sin ** 2
            mul = scale * power
            s_2 = s_1 + mul
            s_3 = s_2
        else:
            s_3 = s_1
        tape.append((cond, sin, power))
        s_1 = s_3
    s_4 = s_1
    # run: the backpropagator of loop_with_if, cotangents of its parameters (slots x=0, scale=1)
    def loop_with_if_bp(d):
        dx = 0.0  # parameter x
        dscale = 0.0  # parameter scale
        # line 21: for i in range(3):
        ds_1_carry = d  # cotangent of the final s_1
        for cond, sin, power in reversed(tape):  # the iterations, newest first
            ds_1 = 0.0  # scope s_1
            ds_3 = ds_1_carry
            # line 22: if x > i:
            if cond:  # the branch taken forward
                # line 23: s = s + scale * math.sin(x) ** 2
                ds_1 += ds_3
                dscale += ds_3 * power
                dpower = ds_3 * scale
                dsin = dpower * 2 * sin
                dx += dsin * math.cos(x)
            else:
                ds_1 += ds_3
            ds_1_carry = ds_1
        return (dx, dscale)
    return (s_4, loop_with_if_bp)
