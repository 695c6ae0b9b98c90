# D[loop_with_if]: the primal result and what its backpropagator reads
def loop_with_if_chad(x, scale):
    s = 0.0  # line 20: s = 0.0
    # line 21: for i in range(3):
    indices = range(3)
    s_1 = s
    dscale_per_ds_1 = 0.0  # the contributions per unit of ds_1's cotangent, the same in every iteration
    dx_per_ds_1 = 0.0
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
        if cond:  # the branch taken
            # line 23: s = s + scale * math.sin(x) ** 2
            dscale_per_ds_1 += power
            dpower = scale
            dsin = dpower * 2 * sin
            dx_per_ds_1 += dsin * math.cos(x)
        s_1 = s_3
    s_4 = s_1
    return (s_4, (dscale_per_ds_1, dx_per_ds_1))


# run: the backpropagator of loop_with_if, cotangents of its parameters (slots x=0, scale=1)
def loop_with_if_bp(saved, d):
    dscale_per_ds_1, dx_per_ds_1 = saved  # the values of the forward pass it reads
    dscale = d * dscale_per_ds_1  # the loop's contributions, added up forward
    dx = d * dx_per_ds_1  # the loop's contributions, added up forward
    return (dx, dscale)
