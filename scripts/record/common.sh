# Sourced by record.sh and record-libraries.sh (after they set $here): what both do.

# venv DIR PACKAGE…: a Python virtual environment with the packages, made once.
venv() {
  local dir=$1
  shift
  if [ ! -x "$dir/bin/python" ]; then
    python3 -m venv "$dir"
    "$dir/bin/pip" install -q "$@"
  fi
}

# capture_server PYTHON: the capture server on a free 127.0.0.1 port (in $port), stopped
# when the script exits; returns once it answers.
capture_server() {
  local py=$1
  port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$py" "$here/capture_server.py" "$port" &
  server=$!
  trap 'kill "$server"' EXIT
  for _ in $(seq 50); do
    "$py" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/__har')" 2>/dev/null && break
    sleep 0.1
  done
}
