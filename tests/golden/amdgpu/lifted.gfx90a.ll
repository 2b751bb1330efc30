; ModuleID = "ptx"
target triple = "amdgcn-amd-amdhsa"
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"

define amdgpu_kernel void @"vadd"([8 x i8] addrspace(4)* byref([8 x i8]) align 8 %"a", [8 x i8] addrspace(4)* byref([8 x i8]) align 8 %"b", [8 x i8] addrspace(4)* byref([8 x i8]) align 8 %"c", [4 x i8] addrspace(4)* byref([4 x i8]) align 4 %"n") "amdgpu-flat-work-group-size"="1,1024" "uniform-work-group-size"="true"
{
entry:
  %"cc" = alloca i1, addrspace(5)
  store i1 0, i1 addrspace(5)* %"cc"
  %"p0" = alloca i1, addrspace(5)
  %"p1" = alloca i1, addrspace(5)
  %"r0" = alloca i32, addrspace(5)
  %"r1" = alloca i32, addrspace(5)
  %"r2" = alloca i32, addrspace(5)
  %"r3" = alloca i32, addrspace(5)
  %"r4" = alloca i32, addrspace(5)
  %"r5" = alloca i32, addrspace(5)
  %"f0" = alloca i32, addrspace(5)
  %"f1" = alloca i32, addrspace(5)
  %"f2" = alloca i32, addrspace(5)
  %"f3" = alloca i32, addrspace(5)
  %"rd0" = alloca i64, addrspace(5)
  %"rd1" = alloca i64, addrspace(5)
  %"rd2" = alloca i64, addrspace(5)
  %"rd3" = alloca i64, addrspace(5)
  %"rd4" = alloca i64, addrspace(5)
  %"rd5" = alloca i64, addrspace(5)
  %"rd6" = alloca i64, addrspace(5)
  %"rd7" = alloca i64, addrspace(5)
  br label %"body"
body:
  %".7" = bitcast [8 x i8] addrspace(4)* %"a" to i8 addrspace(4)*
  %".103" = bitcast i8 addrspace(4)* %".7" to i64 addrspace(4)*
  %".10" = load i64, i64 addrspace(4)* %".103", align 8
  store i64 %".10", i64 addrspace(5)* %"rd1"
  %".12" = bitcast [8 x i8] addrspace(4)* %"b" to i8 addrspace(4)*
  %".104" = bitcast i8 addrspace(4)* %".12" to i64 addrspace(4)*
  %".15" = load i64, i64 addrspace(4)* %".104", align 8
  store i64 %".15", i64 addrspace(5)* %"rd2"
  %".17" = bitcast [8 x i8] addrspace(4)* %"c" to i8 addrspace(4)*
  %".105" = bitcast i8 addrspace(4)* %".17" to i64 addrspace(4)*
  %".20" = load i64, i64 addrspace(4)* %".105", align 8
  store i64 %".20", i64 addrspace(5)* %"rd3"
  %".22" = bitcast [4 x i8] addrspace(4)* %"n" to i8 addrspace(4)*
  %".106" = bitcast i8 addrspace(4)* %".22" to i32 addrspace(4)*
  %".25" = load i32, i32 addrspace(4)* %".106", align 4
  store i32 %".25", i32 addrspace(5)* %"r1"
  %".27" = call i32 @"llvm.amdgcn.workgroup.id.x"()
  store i32 %".27", i32 addrspace(5)* %"r2"
  %".29" = call i8 addrspace(4)* @"llvm.amdgcn.implicitarg.ptr"()
  %".30" = getelementptr i8, i8 addrspace(4)* %".29", i64 12
  %".31" = bitcast i8 addrspace(4)* %".30" to i16 addrspace(4)*
  %".32" = load i16, i16 addrspace(4)* %".31", align 2, !invariant.load !0
  %".33" = zext i16 %".32" to i32
  store i32 %".33", i32 addrspace(5)* %"r3"
  %".35" = call i32 @"llvm.amdgcn.workitem.id.x"()
  store i32 %".35", i32 addrspace(5)* %"r4"
  %".37" = load i32, i32 addrspace(5)* %"r2"
  %".38" = load i32, i32 addrspace(5)* %"r3"
  %".39" = load i32, i32 addrspace(5)* %"r4"
  %".40" = mul i32 %".37", %".38"
  %".41" = add i32 %".40", %".39"
  store i32 %".41", i32 addrspace(5)* %"r5"
  %".43" = load i32, i32 addrspace(5)* %"r5"
  %".44" = load i32, i32 addrspace(5)* %"r1"
  %".45" = icmp sge i32 %".43", %".44"
  store i1 %".45", i1 addrspace(5)* %"p1"
  %".47" = load i1, i1 addrspace(5)* %"p1"
  br i1 %".47", label %"L_DONE", label %"fall"
L_DONE:
  ret void
fall:
  %".49" = load i32, i32 addrspace(5)* %"r5"
  %".50" = sext i32 %".49" to i64
  %".51" = sext i32 4 to i64
  %".52" = mul i64 %".50", %".51"
  store i64 %".52", i64 addrspace(5)* %"rd4"
  %".54" = load i64, i64 addrspace(5)* %"rd1"
  %".55" = load i64, i64 addrspace(5)* %"rd4"
  %".56" = add i64 %".54", %".55"
  store i64 %".56", i64 addrspace(5)* %"rd5"
  %".58" = load i64, i64 addrspace(5)* %"rd2"
  %".59" = load i64, i64 addrspace(5)* %"rd4"
  %".60" = add i64 %".58", %".59"
  store i64 %".60", i64 addrspace(5)* %"rd6"
  %".62" = load i64, i64 addrspace(5)* %"rd3"
  %".63" = load i64, i64 addrspace(5)* %"rd4"
  %".64" = add i64 %".62", %".63"
  store i64 %".64", i64 addrspace(5)* %"rd7"
  %".66" = load i64, i64 addrspace(5)* %"rd5"
  %".67" = inttoptr i64 %".66" to i8 addrspace(1)*
  %".107" = bitcast i8 addrspace(1)* %".67" to i32 addrspace(1)*
  %".70" = load i32, i32 addrspace(1)* %".107", align 4
  %".71" = bitcast i32 %".70" to float
  %".72" = bitcast float %".71" to i32
  store i32 %".72", i32 addrspace(5)* %"f1"
  %".74" = load i64, i64 addrspace(5)* %"rd6"
  %".75" = inttoptr i64 %".74" to i8 addrspace(1)*
  %".108" = bitcast i8 addrspace(1)* %".75" to i32 addrspace(1)*
  %".78" = load i32, i32 addrspace(1)* %".108", align 4
  %".79" = bitcast i32 %".78" to float
  %".80" = bitcast float %".79" to i32
  store i32 %".80", i32 addrspace(5)* %"f2"
  %".82" = load i32, i32 addrspace(5)* %"f1"
  %".83" = bitcast i32 %".82" to float
  %".84" = load i32, i32 addrspace(5)* %"f2"
  %".85" = bitcast i32 %".84" to float
  %".86" = fadd float %".83", %".85"
  %".87" = fcmp uno float %".86", %".86"
  %".88" = bitcast float %".86" to i32
  %".89" = select  i1 %".87", i32 2147483647, i32 %".88"
  %".90" = bitcast i32 %".89" to float
  %".91" = bitcast float %".90" to i32
  store i32 %".91", i32 addrspace(5)* %"f3"
  %".93" = load i64, i64 addrspace(5)* %"rd7"
  %".94" = inttoptr i64 %".93" to i8 addrspace(1)*
  %".96" = load i32, i32 addrspace(5)* %"f3"
  %".97" = bitcast i32 %".96" to float
  %".98" = bitcast float %".97" to i32
  %".109" = bitcast i8 addrspace(1)* %".94" to i32 addrspace(1)*
  store i32 %".98", i32 addrspace(1)* %".109", align 4
  br label %"L_DONE"
}

declare i32 @"llvm.amdgcn.workgroup.id.x"()

declare i8 addrspace(4)* @"llvm.amdgcn.implicitarg.ptr"()

declare i32 @"llvm.amdgcn.workitem.id.x"()

define amdgpu_kernel void @"warp_sum"([8 x i8] addrspace(4)* byref([8 x i8]) align 8 %"out") "amdgpu-flat-work-group-size"="1,1024" "uniform-work-group-size"="true"
{
entry:
  %"cc" = alloca i1, addrspace(5)
  store i1 0, i1 addrspace(5)* %"cc"
  %"p0" = alloca i1, addrspace(5)
  %"p1" = alloca i1, addrspace(5)
  %"r0" = alloca i32, addrspace(5)
  %"r1" = alloca i32, addrspace(5)
  %"r2" = alloca i32, addrspace(5)
  %"r3" = alloca i32, addrspace(5)
  %"r4" = alloca i32, addrspace(5)
  %"r5" = alloca i32, addrspace(5)
  %"r6" = alloca i32, addrspace(5)
  %"r7" = alloca i32, addrspace(5)
  %"rd0" = alloca i64, addrspace(5)
  %"rd1" = alloca i64, addrspace(5)
  %"rd2" = alloca i64, addrspace(5)
  %"rd3" = alloca i64, addrspace(5)
  br label %"body"
body:
  %".4" = call i32 @"llvm.amdgcn.workitem.id.x"()
  store i32 %".4", i32 addrspace(5)* %"r1"
  %".6" = load i32, i32 addrspace(5)* %"r1"
  %".8" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".9" = call i32 @"llvm.amdgcn.mbcnt.hi"(i32 -1, i32 %".8")
  %".10" = and i32 %".9", 31
  %".11" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".12" = call i32 @"llvm.amdgcn.mbcnt.hi"(i32 -1, i32 %".11")
  %".13" = and i32 %".12", 32
  %".14" = call i64 @"llvm.amdgcn.ballot.i64"(i1 1)
  %".15" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".16" = call i32 @"llvm.amdgcn.mbcnt.hi"(i32 -1, i32 %".15")
  %".17" = and i32 %".16", 32
  %".18" = zext i32 %".17" to i64
  %".19" = lshr i64 %".14", %".18"
  %".20" = trunc i64 %".19" to i32
  %".21" = load i32, i32 addrspace(5)* %"r1"
  %".22" = and i32 16, 31
  %".23" = and i32 31, 31
  %".24" = lshr i32 31, 8
  %".25" = and i32 %".24", 31
  %".26" = and i32 %".10", %".25"
  %".27" = xor i32 %".25", -1
  %".28" = and i32 %".23", %".27"
  %".29" = or i32 %".26", %".28"
  %".30" = and i32 %".10", %".25"
  %".31" = xor i32 %".10", %".22"
  %".32" = icmp sle i32 %".31", %".29"
  %".33" = select  i1 %".32", i32 %".31", i32 %".10"
  %".34" = icmp ult i32 %".33", 32
  %".35" = and i32 %".33", 31
  %".36" = and i1 %".32", %".34"
  %".37" = lshr i32 %".20", %".35"
  %".38" = trunc i32 %".37" to i1
  %".39" = and i1 %".36", %".38"
  %".40" = and i32 %".35", 31
  %".41" = or i32 %".13", %".40"
  %".42" = shl i32 %".41", 2
  %".43" = call i32 @"llvm.amdgcn.ds.bpermute"(i32 %".42", i32 %".6")
  %".44" = zext i32 %".43" to i64
  %".45" = trunc i64 %".44" to i32
  %".46" = select  i1 %".39", i32 %".45", i32 %".21"
  store i32 %".46", i32 addrspace(5)* %"r2"
  store i1 %".32", i1 addrspace(5)* %"p1"
  %".49" = load i32, i32 addrspace(5)* %"r1"
  %".50" = load i32, i32 addrspace(5)* %"r2"
  %".51" = add i32 %".49", %".50"
  store i32 %".51", i32 addrspace(5)* %"r3"
  %".53" = load i32, i32 addrspace(5)* %"r3"
  %".55" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".56" = call i32 @"llvm.amdgcn.mbcnt.hi"(i32 -1, i32 %".55")
  %".57" = and i32 %".56", 31
  %".58" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".59" = call i32 @"llvm.amdgcn.mbcnt.hi"(i32 -1, i32 %".58")
  %".60" = and i32 %".59", 32
  %".61" = call i64 @"llvm.amdgcn.ballot.i64"(i1 1)
  %".62" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".63" = call i32 @"llvm.amdgcn.mbcnt.hi"(i32 -1, i32 %".62")
  %".64" = and i32 %".63", 32
  %".65" = zext i32 %".64" to i64
  %".66" = lshr i64 %".61", %".65"
  %".67" = trunc i64 %".66" to i32
  %".68" = load i32, i32 addrspace(5)* %"r3"
  %".69" = and i32 1, 31
  %".70" = and i32 31, 31
  %".71" = lshr i32 31, 8
  %".72" = and i32 %".71", 31
  %".73" = and i32 %".57", %".72"
  %".74" = xor i32 %".72", -1
  %".75" = and i32 %".70", %".74"
  %".76" = or i32 %".73", %".75"
  %".77" = and i32 %".57", %".72"
  %".78" = add i32 %".57", %".69"
  %".79" = icmp sle i32 %".78", %".76"
  %".80" = select  i1 %".79", i32 %".78", i32 %".57"
  %".81" = icmp ult i32 %".80", 32
  %".82" = and i32 %".80", 31
  %".83" = and i1 %".79", %".81"
  %".84" = lshr i32 %".67", %".82"
  %".85" = trunc i32 %".84" to i1
  %".86" = and i1 %".83", %".85"
  %".87" = and i32 %".82", 31
  %".88" = or i32 %".60", %".87"
  %".89" = shl i32 %".88", 2
  %".90" = call i32 @"llvm.amdgcn.ds.bpermute"(i32 %".89", i32 %".53")
  %".91" = zext i32 %".90" to i64
  %".92" = trunc i64 %".91" to i32
  %".93" = select  i1 %".86", i32 %".92", i32 %".68"
  store i32 %".93", i32 addrspace(5)* %"r4"
  %".95" = load i32, i32 addrspace(5)* %"r4"
  %".96" = icmp ugt i32 %".95", 40
  store i1 %".96", i1 addrspace(5)* %"p1"
  %".98" = load i1, i1 addrspace(5)* %"p1"
  %".100" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".101" = call i32 @"llvm.amdgcn.mbcnt.hi"(i32 -1, i32 %".100")
  %".102" = and i32 %".101", 31
  %".103" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".104" = call i32 @"llvm.amdgcn.mbcnt.hi"(i32 -1, i32 %".103")
  %".105" = and i32 %".104", 32
  %".106" = call i64 @"llvm.amdgcn.ballot.i64"(i1 1)
  %".107" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".108" = call i32 @"llvm.amdgcn.mbcnt.hi"(i32 -1, i32 %".107")
  %".109" = and i32 %".108", 32
  %".110" = zext i32 %".109" to i64
  %".111" = lshr i64 %".106", %".110"
  %".112" = trunc i64 %".111" to i32
  %".113" = call i64 @"llvm.amdgcn.ballot.i64"(i1 %".98")
  %".114" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".115" = call i32 @"llvm.amdgcn.mbcnt.hi"(i32 -1, i32 %".114")
  %".116" = and i32 %".115", 32
  %".117" = zext i32 %".116" to i64
  %".118" = lshr i64 %".113", %".117"
  %".119" = trunc i64 %".118" to i32
  %".120" = and i32 %".112", 4294967295
  br label %"lanes"
lanes:
  %".122" = phi  i32 [0, %"body"], [%".134", %"lanes"]
  %".123" = phi  i32 [0, %"body"], [%".133", %"lanes"]
  %".124" = lshr i32 %".120", %".122"
  %".125" = trunc i32 %".124" to i1
  %".126" = lshr i32 %".119", %".122"
  %".127" = and i32 %".126", 1
  %".128" = zext i32 %".127" to i64
  %".129" = icmp ne i64 %".128", 0
  %".130" = and i1 %".125", %".129"
  %".131" = shl i32 1, %".122"
  %".132" = select  i1 %".130", i32 %".131", i32 0
  %".133" = or i32 %".123", %".132"
  %".134" = add i32 %".122", 1
  %".135" = icmp ult i32 %".134", 32
  br i1 %".135", label %"lanes", label %"lanes_done"
lanes_done:
  store i32 %".133", i32 addrspace(5)* %"r5"
  %".138" = bitcast [8 x i8] addrspace(4)* %"out" to i8 addrspace(4)*
  %".163" = bitcast i8 addrspace(4)* %".138" to i64 addrspace(4)*
  %".141" = load i64, i64 addrspace(4)* %".163", align 8
  store i64 %".141", i64 addrspace(5)* %"rd1"
  %".143" = load i32, i32 addrspace(5)* %"r1"
  %".144" = zext i32 %".143" to i64
  %".145" = zext i32 4 to i64
  %".146" = mul i64 %".144", %".145"
  store i64 %".146", i64 addrspace(5)* %"rd2"
  %".148" = load i64, i64 addrspace(5)* %"rd1"
  %".149" = load i64, i64 addrspace(5)* %"rd2"
  %".150" = add i64 %".148", %".149"
  store i64 %".150", i64 addrspace(5)* %"rd3"
  %".152" = load i32, i32 addrspace(5)* %"r4"
  %".153" = load i32, i32 addrspace(5)* %"r5"
  %".154" = add i32 %".152", %".153"
  store i32 %".154", i32 addrspace(5)* %"r6"
  %".156" = load i64, i64 addrspace(5)* %"rd3"
  %".157" = inttoptr i64 %".156" to i8 addrspace(1)*
  %".159" = load i32, i32 addrspace(5)* %"r6"
  %".164" = bitcast i8 addrspace(1)* %".157" to i32 addrspace(1)*
  store i32 %".159", i32 addrspace(1)* %".164", align 4
  ret void
}

declare i32 @"llvm.amdgcn.mbcnt.lo"(i32 %".1", i32 %".2")

declare i32 @"llvm.amdgcn.mbcnt.hi"(i32 %".1", i32 %".2")

declare i64 @"llvm.amdgcn.ballot.i64"(i1 %".1")

declare i32 @"llvm.amdgcn.ds.bpermute"(i32 %".1", i32 %".2")

define amdgpu_kernel void @"shared_step"([8 x i8] addrspace(4)* byref([8 x i8]) align 8 %"out") "amdgpu-flat-work-group-size"="1,1024" "uniform-work-group-size"="true"
{
entry:
  %"cc" = alloca i1, addrspace(5)
  store i1 0, i1 addrspace(5)* %"cc"
  %"r0" = alloca i32, addrspace(5)
  %"r1" = alloca i32, addrspace(5)
  %"r2" = alloca i32, addrspace(5)
  %"r3" = alloca i32, addrspace(5)
  %"r4" = alloca i32, addrspace(5)
  %"r5" = alloca i32, addrspace(5)
  %"r6" = alloca i32, addrspace(5)
  %"r7" = alloca i32, addrspace(5)
  %"rd0" = alloca i64, addrspace(5)
  %"rd1" = alloca i64, addrspace(5)
  %"rd2" = alloca i64, addrspace(5)
  %"rd3" = alloca i64, addrspace(5)
  br label %"body"
body:
  %".4" = call i32 @"llvm.amdgcn.workitem.id.x"()
  store i32 %".4", i32 addrspace(5)* %"r1"
  %".6" = load i32, i32 addrspace(5)* %"r1"
  %".7" = icmp ugt i32 2, 32
  %".8" = select  i1 %".7", i32 32, i32 2
  %".9" = icmp uge i32 %".8", 32
  %".10" = select  i1 %".9", i32 0, i32 %".8"
  %".11" = shl i32 %".6", %".10"
  %".12" = select  i1 %".9", i32 0, i32 %".11"
  store i32 %".12", i32 addrspace(5)* %"r2"
  %".14" = ptrtoint [1024 x i8] addrspace(3)* @"buf" to i32
  %".15" = zext i32 %".14" to i64
  %".16" = trunc i64 %".15" to i32
  store i32 %".16", i32 addrspace(5)* %"r3"
  %".18" = load i32, i32 addrspace(5)* %"r3"
  %".19" = load i32, i32 addrspace(5)* %"r2"
  %".20" = add i32 %".18", %".19"
  store i32 %".20", i32 addrspace(5)* %"r4"
  %".22" = load i32, i32 addrspace(5)* %"r4"
  %".23" = zext i32 %".22" to i64
  %".24" = trunc i64 %".23" to i32
  %".25" = inttoptr i32 %".24" to i8 addrspace(3)*
  %".27" = load i32, i32 addrspace(5)* %"r1"
  %".69" = bitcast i8 addrspace(3)* %".25" to i32 addrspace(3)*
  store i32 %".27", i32 addrspace(3)* %".69", align 4
  fence syncscope("workgroup") release
  call void @"llvm.amdgcn.s.barrier"()
  fence syncscope("workgroup") acquire
  %".33" = load i32, i32 addrspace(5)* %"r2"
  %".34" = xor i32 %".33", 4
  store i32 %".34", i32 addrspace(5)* %"r5"
  %".36" = load i32, i32 addrspace(5)* %"r3"
  %".37" = load i32, i32 addrspace(5)* %"r5"
  %".38" = add i32 %".36", %".37"
  store i32 %".38", i32 addrspace(5)* %"r6"
  %".40" = load i32, i32 addrspace(5)* %"r6"
  %".41" = zext i32 %".40" to i64
  %".42" = trunc i64 %".41" to i32
  %".43" = inttoptr i32 %".42" to i8 addrspace(3)*
  %".70" = bitcast i8 addrspace(3)* %".43" to i32 addrspace(3)*
  %".46" = load i32, i32 addrspace(3)* %".70", align 4
  store i32 %".46", i32 addrspace(5)* %"r7"
  %".48" = bitcast [8 x i8] addrspace(4)* %"out" to i8 addrspace(4)*
  %".71" = bitcast i8 addrspace(4)* %".48" to i64 addrspace(4)*
  %".51" = load i64, i64 addrspace(4)* %".71", align 8
  store i64 %".51", i64 addrspace(5)* %"rd1"
  %".53" = load i32, i32 addrspace(5)* %"r1"
  %".54" = zext i32 %".53" to i64
  %".55" = zext i32 4 to i64
  %".56" = mul i64 %".54", %".55"
  store i64 %".56", i64 addrspace(5)* %"rd2"
  %".58" = load i64, i64 addrspace(5)* %"rd1"
  %".59" = load i64, i64 addrspace(5)* %"rd2"
  %".60" = add i64 %".58", %".59"
  store i64 %".60", i64 addrspace(5)* %"rd3"
  %".62" = load i64, i64 addrspace(5)* %"rd3"
  %".63" = inttoptr i64 %".62" to i8 addrspace(1)*
  %".65" = load i32, i32 addrspace(5)* %"r7"
  %".72" = bitcast i8 addrspace(1)* %".63" to i32 addrspace(1)*
  store i32 %".65", i32 addrspace(1)* %".72", align 4
  ret void
}

@"buf" = internal addrspace(3) global [1024 x i8] undef, align 4
declare void @"llvm.amdgcn.s.barrier"()

!llvm.module.flags = !{ !1 }
!0 = !{  }
!1 = !{ i32 1, !"amdhsa_code_object_version", i32 500 }