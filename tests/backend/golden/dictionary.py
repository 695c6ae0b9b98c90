# D[dictionary]: the primal result and what its backpropagator reads
def dictionary_chad(x, y):
    # line 54: d = {"a": x, "b": y * y}
    mul = y * y
    d = {'a': x, 'b': mul}
    s = 0.0  # line 55: s = 0.0
    # line 56: for k in d:
    places = positions(d)
    s_1 = s
    dd_per_ds_1 = Zero  # the contributions per unit of ds_1's cotangent, the same in every iteration
    dd_per_ds_1_at, dd_per_ds_1_values = ([], [])  # the loop's additions to dd_per_ds_1, collected
    for k_1 in places:  # D[loop]: forward iterations
        x_1 = k_1
        k = x_1
        # line 57: s = s + d[k] * d["a"]
        item = d[k]
        item_1 = d['a']
        mul_1 = item * item_1
        s_2 = s_1 + mul_1
        dd_per_ds_1_at.append('a')  # the reverse pass, at ds_1's cotangent 1.0
        dd_per_ds_1_values.append(item)
        dd_per_ds_1_at.append(k)
        dd_per_ds_1_values.append(item_1)
        s_1 = s_2
    dd_per_ds_1 = add_items(dd_per_ds_1, dd_per_ds_1_at, dd_per_ds_1_values)
    s_3 = s_1
    return (s_3, (dd_per_ds_1, y))


# run: the backpropagator of dictionary, cotangents of its parameters (slots x=0, y=1)
def dictionary_bp(saved, d_1):
    dd_per_ds_1, y = saved  # the values of the forward pass it reads
    dd = scaled(dd_per_ds_1, d_1)  # the loop's contributions, added up forward
    # line 54: d = {"a": x, "b": y * y}
    dx = tuple_part(dd, 'a', 0.0)
    dmul = tuple_part(dd, 'b', 0.0)
    dy = dmul * y * 2.0
    return (dx, dy)
