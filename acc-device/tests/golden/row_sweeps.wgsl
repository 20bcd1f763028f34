// row_sweeps
@group(0) @binding(0) var<storage, read> p0: array<f32>; // x
@group(0) @binding(1) var<storage, read_write> p1: array<f32>; // y
struct Params {
    p2: u64,
    p3: u64,
    b0: u32,
    n0: u32,
    b1: u32,
    n1: u32,
    acc_groups: u32,
}
@group(0) @binding(2) var<storage, read> params: Params;
@group(0) @binding(3) var<storage, read_write> acc_status: array<atomic<u32>, 5>;
var<workgroup> acc_wa_0_0: array<f32, 256>;
var<workgroup> acc_wa_0_1: array<f32, 256>;
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
@compute @workgroup_size(256)
fn row_sweeps_gpu(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {
    var l2: u64;
    var l3: u64;
    var l4: u64;
    var l5: u64;
    var l6: u64;
    var l7: u64;
    var l8: u64;
    var l9: u64;
    var l10: u64;
    var l11: u64;
    var l12: u64;
    var l13: u64;
    var l14: u64;
    var l15: u64;
    var l16: u64;
    var l17: u64;
    var l18: u64;
    var l19: u64;
    l2 = 0lu;
    l3 = (u64(params.n0) / params.p2);
    let acc_trips_g0: u64 = select(0lu, (l3 - l2), (l2 < l3));
    let acc_trips_g: u64 = acc_trips_g0;
    let acc_chunks_g: u32 = acc_chunks_of(acc_trips_g);
    var acc_c_g: u32 = 0u;
    for (; acc_c_g < acc_chunks_g; acc_c_g = acc_c_g + 1u) {
    let acc_base_g: u64 = u64(acc_c_g) << 31u;
    let acc_left_g: u64 = acc_trips_g - acc_base_g;
    let acc_end_g: u32 = select(u32(acc_left_g), 2147483648u, (u32(acc_left_g >> 32u) | (u32(acc_left_g) >> 31u)) != 0u);
    var acc_k_g: u32 = acc_wg.x;
    for (; acc_k_g < acc_end_g; acc_k_g = acc_k_g + acc_nwg.x) {
        l4 = l2 + u64((acc_base_g + u64(acc_k_g))) * 1lu;
        workgroupBarrier();
        l5 = 0lu;
        l6 = params.p2;
        {
    let acc_trips_v0: u64 = select(0lu, (l6 - l5), (l5 < l6));
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l7 = l5 + u64((acc_base_v + u64(acc_k_v))) * 1lu;
            acc_wa_0_0[select(u32(l7), 4294967295u, u32(l7 >> 32u) != 0u)] = p0[params.b0 + select(0u, u32(((l4 * params.p2) + l7)), acc_in_bounds(0u, ((l4 * params.p2) + l7), params.n0))];
    }
    }
        }
        workgroupBarrier();
        l8 = 0lu;
        l9 = params.p3;
        { let acc_n2: u32 = acc_trips32(select(0lu, (l9 - l8), (l8 < l9)));
        for (var acc_k2: u32 = 0u; acc_k2 < acc_n2; acc_k2 = acc_k2 + 1u) {
            l10 = l8 + u64(acc_k2) * 1lu;
            l11 = 1lu;
            l12 = (params.p2 - 1lu);
            {
    let acc_trips_v0: u64 = select(0lu, (l12 - l11), (l11 < l12));
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l13 = l11 + u64((acc_base_v + u64(acc_k_v))) * 1lu;
                acc_wa_0_1[select(u32(l13), 4294967295u, u32(l13 >> 32u) != 0u)] = ((acc_wa_0_0[select(u32((l13 - 1lu)), 4294967295u, u32((l13 - 1lu) >> 32u) != 0u)] + acc_wa_0_0[select(u32((l13 + 1lu)), 4294967295u, u32((l13 + 1lu) >> 32u) != 0u)]) * f32(5e-1));
    }
    }
            }
            workgroupBarrier();
            l14 = 1lu;
            l15 = (params.p2 - 1lu);
            {
    let acc_trips_v0: u64 = select(0lu, (l15 - l14), (l14 < l15));
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l16 = l14 + u64((acc_base_v + u64(acc_k_v))) * 1lu;
                acc_wa_0_0[select(u32(l16), 4294967295u, u32(l16 >> 32u) != 0u)] = acc_wa_0_1[select(u32(l16), 4294967295u, u32(l16 >> 32u) != 0u)];
    }
    }
            }
            workgroupBarrier();
        } }
        l17 = 0lu;
        l18 = params.p2;
        {
    let acc_trips_v0: u64 = select(0lu, (l18 - l17), (l17 < l18));
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l19 = l17 + u64((acc_base_v + u64(acc_k_v))) * 1lu;
            { let acc_i = ((l4 * params.p2) + l19); if (acc_in_bounds(1u, acc_i, params.n1)) { p1[params.b1 + u32(acc_i)] = acc_wa_0_0[select(u32(l19), 4294967295u, u32(l19 >> 32u) != 0u)]; } }
    }
    }
        }
    }
    }
}
