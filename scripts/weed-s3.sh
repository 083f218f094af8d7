# Sourced by the bench scripts that need S3 (bench-remote.sh,
# bench-thin.sh): starts SeaweedFS (`weed mini`) on 127.0.0.1 with free
# ports and generated credentials, bucket "bench", its files in $work.
# Sets weed_pid (the caller's EXIT trap kills it), key, secret and s3_port,
# and exports rclone's remote B (B:bench/...) for it.
read -r -a p <<< "$(python3 -c 'import socket
s=[socket.socket() for _ in range(10)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')"
key=AK$(openssl rand -hex 8) secret=$(openssl rand -hex 20) s3_port=${p[6]}
printf '{"identities":[{"name":"bench","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","List","Tagging","Write"]}]}\n' \
    "$key" "$secret" > "$work/s3.json"
mkdir -p "$work/weed"
weed mini -dir="$work/weed" -ip=127.0.0.1 -ip.bind=127.0.0.1 -admin.ui=false -bucket=bench -s3.config="$work/s3.json" \
    -s3.port.iceberg=0 -s3.port.lance=0 -webdav=false \
    -master.port="${p[0]}" -master.port.grpc="${p[1]}" -volume.port="${p[2]}" -volume.port.grpc="${p[3]}" \
    -filer.port="${p[4]}" -filer.port.grpc="${p[5]}" -s3.port="${p[6]}" -s3.port.grpc="${p[7]}" \
    -admin.port="${p[8]}" -admin.port.grpc="${p[9]}" > "$work/weed.log" 2>&1 &
weed_pid=$!
export RCLONE_CONFIG=/dev/null RCLONE_CONFIG_B_TYPE=s3 RCLONE_CONFIG_B_PROVIDER=Other RCLONE_CONFIG_B_ACCESS_KEY_ID=$key \
       RCLONE_CONFIG_B_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_B_ENDPOINT=http://127.0.0.1:$s3_port RCLONE_CONFIG_B_REGION=us-east-1
for _ in $(seq 1 300); do rclone lsjson B:bench >/dev/null 2>&1 && break; sleep 0.2; done
rclone lsjson B:bench >/dev/null || { echo "$(basename "$0"): SeaweedFS did not start"; tail -5 "$work/weed.log"; exit 1; }
