// softmax
@group(0) @binding(0) var<storage, read> p0: array<f32>; // x
@group(0) @binding(1) var<storage, read_write> p1: array<f32>; // y
struct Params {
    p2: u64,
    b0: u32,
    n0: u32,
    b1: u32,
    n1: u32,
    acc_groups: u32,
}
@group(0) @binding(2) var<storage, read> params: Params;
@group(0) @binding(3) var<storage, read_write> acc_status: array<atomic<u32>, 5>;
fn acc_trips32(n: u64) -> u32 {
    if (u32(n >> 32u) != 0u) { atomicCompareExchangeWeak(&acc_status[0], 0u, 3u); return 0u; }
    return u32(n);
}
fn acc_chunks_of(n: u64) -> u32 {
    let c = (n >> 31u) + select(0lu, 1lu, (u32(n) & 2147483647u) != 0u);
    return acc_trips32(c);
}
fn acc_in_bounds(param: u32, i: u64, len: u32) -> bool {
    if (u32(i >> 32u) == 0u && u32(i) < len) { return true; }
    if (atomicCompareExchangeWeak(&acc_status[0], 0u, 1u).exchanged) {
        atomicStore(&acc_status[1], param);
        atomicStore(&acc_status[2], u32(i));
        atomicStore(&acc_status[3], len);
        atomicStore(&acc_status[4], u32(i >> 32u));
    }
    return false;
}
var<workgroup> acc_gang_0_3: array<f32, 256>;
fn acc_exp_f32(a0: f64) -> f64 {
    let v2: f64 = a0 * f64(1.4426950408889634e0);
    let v3: f64 = round(v2);
    let v4: f64 = -v3;
    let v6: f64 = fma(v4, f64(6.931471803691238e-1), a0);
    let v8: f64 = fma(v4, f64(1.9082149292705877e-10), v6);
    let v11: f64 = fma(v8, f64(2.7557319223985894e-7), f64(2.7557319223985893e-6));
    let v13: f64 = fma(v8, v11, f64(2.48015873015873e-5));
    let v15: f64 = fma(v8, v13, f64(1.984126984126984e-4));
    let v17: f64 = fma(v8, v15, f64(1.388888888888889e-3));
    let v19: f64 = fma(v8, v17, f64(8.333333333333333e-3));
    let v21: f64 = fma(v8, v19, f64(4.1666666666666664e-2));
    let v23: f64 = fma(v8, v21, f64(1.6666666666666666e-1));
    let v25: f64 = fma(v8, v23, f64(5e-1));
    let v27: f64 = fma(v8, v25, f64(1e0));
    let v29: f64 = fma(v8, v27, f64(1e0));
    let v30: i64 = i64(v3);
    let v32: i64 = v30 + 1023li;
    let v33: i64 = v32 << 52u;
    let v34: f64 = bitcast<f64>(v33);
    let v35: f64 = v29 * v34;
    let v37: bool = a0 > f64(7.09e2);
    let v39: f64 = select(v35, bitcast<f64>(9218868437227405312lu), v37);
    let v41: bool = a0 < f64(-7.08e2);
    let v43: f64 = select(v39, f64(0e0), v41);
    return v43;
}
var<workgroup> acc_gang_0_7: array<f32, 256>;
@compute @workgroup_size(256)
fn softmax_gpu(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {
    var l0: u64;
    var l1: u64;
    var l2: u64;
    var l3: f32;
    var l4: u64;
    var l5: u64;
    var l6: u64;
    var l7: f32;
    var l8: u64;
    var l9: u64;
    var l10: u64;
    var l11: f32;
    var l12: u64;
    var l13: u64;
    var l14: u64;
    l0 = 0lu;
    l1 = (u64(params.n0) / params.p2);
    let acc_trips_g0: u64 = select(0lu, (l1 - l0), (l0 < l1));
    let acc_trips_g: u64 = acc_trips_g0;
    let acc_chunks_g: u32 = acc_chunks_of(acc_trips_g);
    var acc_c_g: u32 = 0u;
    for (; acc_c_g < acc_chunks_g; acc_c_g = acc_c_g + 1u) {
    let acc_base_g: u64 = u64(acc_c_g) << 31u;
    let acc_left_g: u64 = acc_trips_g - acc_base_g;
    let acc_end_g: u32 = select(u32(acc_left_g), 2147483648u, (u32(acc_left_g >> 32u) | (u32(acc_left_g) >> 31u)) != 0u);
    var acc_k_g: u32 = acc_wg.x;
    for (; acc_k_g < acc_end_g; acc_k_g = acc_k_g + acc_nwg.x) {
        l2 = l0 + u64((acc_base_g + u64(acc_k_g))) * 1lu;
        l3 = bitcast<f32>(4286578688u);
        l4 = 0lu;
        l5 = params.p2;
        {
        let acc_keep_0 = l3;
        l3 = bitcast<f32>(4286578688u);
    let acc_trips_v0: u64 = select(0lu, (l5 - l4), (l4 < l5));
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l6 = l4 + u64((acc_base_v + u64(acc_k_v))) * 1lu;
            l3 = max(l3, p0[params.b0 + select(0u, u32(((l2 * params.p2) + l6)), acc_in_bounds(0u, ((l2 * params.p2) + l6), params.n0))]);
    }
    }
        acc_gang_0_3[acc_lid] = l3;
        workgroupBarrier();
        for (var acc_s: u32 = 128u; acc_s > 0u; acc_s = acc_s >> 1u) {
            if (acc_lid < acc_s) { acc_gang_0_3[acc_lid] = select(max(acc_gang_0_3[acc_lid], acc_gang_0_3[acc_lid + acc_s]), acc_gang_0_3[acc_lid], acc_gang_0_3[acc_lid + acc_s] != acc_gang_0_3[acc_lid + acc_s]); }
            workgroupBarrier();
        }
        l3 = select(max(acc_keep_0, acc_gang_0_3[0]), acc_keep_0, acc_gang_0_3[0] != acc_gang_0_3[0]);
        workgroupBarrier();
        }
        l7 = f32(0.0);
        l8 = 0lu;
        l9 = params.p2;
        {
        let acc_keep_0 = l7;
        l7 = f32(0.0);
    let acc_trips_v0: u64 = select(0lu, (l9 - l8), (l8 < l9));
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l10 = l8 + u64((acc_base_v + u64(acc_k_v))) * 1lu;
            l7 = (l7 + f32(acc_exp_f32(f64((p0[params.b0 + select(0u, u32(((l2 * params.p2) + l10)), acc_in_bounds(0u, ((l2 * params.p2) + l10), params.n0))] - l3)))));
    }
    }
        acc_gang_0_7[acc_lid] = l7;
        workgroupBarrier();
        for (var acc_s: u32 = 128u; acc_s > 0u; acc_s = acc_s >> 1u) {
            if (acc_lid < acc_s) { acc_gang_0_7[acc_lid] = (acc_gang_0_7[acc_lid] + acc_gang_0_7[acc_lid + acc_s]); }
            workgroupBarrier();
        }
        l7 = (acc_keep_0 + acc_gang_0_7[0]);
        workgroupBarrier();
        }
        l11 = f32(f64(f32(1.0)) / f64(l7));
        l12 = 0lu;
        l13 = params.p2;
        {
    let acc_trips_v0: u64 = select(0lu, (l13 - l12), (l12 < l13));
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l14 = l12 + u64((acc_base_v + u64(acc_k_v))) * 1lu;
            { let acc_i = ((l2 * params.p2) + l14); if (acc_in_bounds(1u, acc_i, params.n1)) { p1[params.b1 + u32(acc_i)] = (f32(acc_exp_f32(f64((p0[params.b0 + select(0u, u32(((l2 * params.p2) + l14)), acc_in_bounds(0u, ((l2 * params.p2) + l14), params.n0))] - l3)))) * l11); } }
    }
    }
        }
    }
    }
}
