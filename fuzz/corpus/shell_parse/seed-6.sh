cat <<-'X'
	literal $(x)
	X