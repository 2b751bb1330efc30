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
  %".9" = call i32 @"llvm.amdgcn.ballot.i32"(i1 1)
  %".10" = load i32, i32 addrspace(5)* %"r1"
  %".11" = and i32 16, 31
  %".12" = and i32 31, 31
  %".13" = lshr i32 31, 8
  %".14" = and i32 %".13", 31
  %".15" = and i32 %".8", %".14"
  %".16" = xor i32 %".14", -1
  %".17" = and i32 %".12", %".16"
  %".18" = or i32 %".15", %".17"
  %".19" = and i32 %".8", %".14"
  %".20" = xor i32 %".8", %".11"
  %".21" = icmp sle i32 %".20", %".18"
  %".22" = select  i1 %".21", i32 %".20", i32 %".8"
  %".23" = icmp ult i32 %".22", 32
  %".24" = and i32 %".22", 31
  %".25" = and i1 %".21", %".23"
  %".26" = lshr i32 %".9", %".24"
  %".27" = trunc i32 %".26" to i1
  %".28" = and i1 %".25", %".27"
  %".29" = and i32 %".24", 31
  %".30" = or i32 0, %".29"
  %".31" = shl i32 %".30", 2
  %".32" = call i32 @"llvm.amdgcn.ds.bpermute"(i32 %".31", i32 %".6")
  %".33" = zext i32 %".32" to i64
  %".34" = trunc i64 %".33" to i32
  %".35" = select  i1 %".28", i32 %".34", i32 %".10"
  store i32 %".35", i32 addrspace(5)* %"r2"
  store i1 %".21", i1 addrspace(5)* %"p1"
  %".38" = load i32, i32 addrspace(5)* %"r1"
  %".39" = load i32, i32 addrspace(5)* %"r2"
  %".40" = add i32 %".38", %".39"
  store i32 %".40", i32 addrspace(5)* %"r3"
  %".42" = load i32, i32 addrspace(5)* %"r3"
  %".44" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".45" = call i32 @"llvm.amdgcn.ballot.i32"(i1 1)
  %".46" = load i32, i32 addrspace(5)* %"r3"
  %".47" = and i32 1, 31
  %".48" = and i32 31, 31
  %".49" = lshr i32 31, 8
  %".50" = and i32 %".49", 31
  %".51" = and i32 %".44", %".50"
  %".52" = xor i32 %".50", -1
  %".53" = and i32 %".48", %".52"
  %".54" = or i32 %".51", %".53"
  %".55" = and i32 %".44", %".50"
  %".56" = add i32 %".44", %".47"
  %".57" = icmp sle i32 %".56", %".54"
  %".58" = select  i1 %".57", i32 %".56", i32 %".44"
  %".59" = icmp ult i32 %".58", 32
  %".60" = and i32 %".58", 31
  %".61" = and i1 %".57", %".59"
  %".62" = lshr i32 %".45", %".60"
  %".63" = trunc i32 %".62" to i1
  %".64" = and i1 %".61", %".63"
  %".65" = and i32 %".60", 31
  %".66" = or i32 0, %".65"
  %".67" = shl i32 %".66", 2
  %".68" = call i32 @"llvm.amdgcn.ds.bpermute"(i32 %".67", i32 %".42")
  %".69" = zext i32 %".68" to i64
  %".70" = trunc i64 %".69" to i32
  %".71" = select  i1 %".64", i32 %".70", i32 %".46"
  store i32 %".71", i32 addrspace(5)* %"r4"
  %".73" = load i32, i32 addrspace(5)* %"r4"
  %".74" = icmp ugt i32 %".73", 40
  store i1 %".74", i1 addrspace(5)* %"p1"
  %".76" = load i1, i1 addrspace(5)* %"p1"
  %".78" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".79" = call i32 @"llvm.amdgcn.ballot.i32"(i1 1)
  %".80" = call i32 @"llvm.amdgcn.ballot.i32"(i1 %".76")
  %".81" = and i32 %".79", 4294967295
  br label %"lanes"
lanes:
  %".83" = phi  i32 [0, %"body"], [%".95", %"lanes"]
  %".84" = phi  i32 [0, %"body"], [%".94", %"lanes"]
  %".85" = lshr i32 %".81", %".83"
  %".86" = trunc i32 %".85" to i1
  %".87" = lshr i32 %".80", %".83"
  %".88" = and i32 %".87", 1
  %".89" = zext i32 %".88" to i64
  %".90" = icmp ne i64 %".89", 0
  %".91" = and i1 %".86", %".90"
  %".92" = shl i32 1, %".83"
  %".93" = select  i1 %".91", i32 %".92", i32 0
  %".94" = or i32 %".84", %".93"
  %".95" = add i32 %".83", 1
  %".96" = icmp ult i32 %".95", 32
  br i1 %".96", label %"lanes", label %"lanes_done"
lanes_done:
  store i32 %".94", i32 addrspace(5)* %"r5"
  %".99" = bitcast [8 x i8] addrspace(4)* %"out" to i8 addrspace(4)*
  %".124" = bitcast i8 addrspace(4)* %".99" to i64 addrspace(4)*
  %".102" = load i64, i64 addrspace(4)* %".124", align 8
  store i64 %".102", i64 addrspace(5)* %"rd1"
  %".104" = load i32, i32 addrspace(5)* %"r1"
  %".105" = zext i32 %".104" to i64
  %".106" = zext i32 4 to i64
  %".107" = mul i64 %".105", %".106"
  store i64 %".107", i64 addrspace(5)* %"rd2"
  %".109" = load i64, i64 addrspace(5)* %"rd1"
  %".110" = load i64, i64 addrspace(5)* %"rd2"
  %".111" = add i64 %".109", %".110"
  store i64 %".111", i64 addrspace(5)* %"rd3"
  %".113" = load i32, i32 addrspace(5)* %"r4"
  %".114" = load i32, i32 addrspace(5)* %"r5"
  %".115" = add i32 %".113", %".114"
  store i32 %".115", i32 addrspace(5)* %"r6"
  %".117" = load i64, i64 addrspace(5)* %"rd3"
  %".118" = inttoptr i64 %".117" to i8 addrspace(1)*
  %".120" = load i32, i32 addrspace(5)* %"r6"
  %".125" = bitcast i8 addrspace(1)* %".118" to i32 addrspace(1)*
  store i32 %".120", i32 addrspace(1)* %".125", align 4
  ret void
}

declare i32 @"llvm.amdgcn.mbcnt.lo"(i32 %".1", i32 %".2")

declare i32 @"llvm.amdgcn.ballot.i32"(i1 %".1")

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