# gogui-regress tests for darkgo (GNU Go regression format)

1 name
#? [darkgo]

2 protocol_version
#? [2]

3 known_command genmove
#? [true]

4 known_command no-such-command
#? [false]

5 gogui-analyze_commands
#? [.*dboard/Ownership/gogui-ownership.*]

boardsize 9
clear_board
komi 7

10 final_score
#? [W\+7(\.0)?]

# mutual atari: black E5-E4 and white F5 each have one liberty, F4, and whoever plays there
# captures (a lone stone in atari on an open board is no such test: netting it wins as much)
play b E5
play b E4
play b G5
play b F6
play w F5
play w D5
play w D4
play w E3
play w E6

20 reg_genmove b
#? [F4]

21 reg_genmove w
#? [F4]

# reg_genmove leaves the board as it was
22 list_stones white
#? [E3 D4 D5 F5 E6]

# playing on an occupied point must be refused (an error: expected fail)
23 play b E5
#? [.*]*

# suicide in the corner must be refused
clear_board
play b A2
play b B1
30 play w A1
#? [.*]*

# ko: white E5 captured by black F5, immediate retake refused
clear_board
play b D5
play b E6
play b E4
play w F6
play w G5
play w F4
play w E5
40 play b F5
#? []

41 list_stones white
#? [!.*E5.*]

42 play w E5
#? [.*]*

# after a ko threat exchange white may retake
play w A9
play b J1
43 play w E5
#? []

44 list_stones black
#? [!.*F5.*]

# undo goes back one move
45 undo
#? []

46 list_stones black
#? [.*F5.*]

# one black stone alone on the board: area count, all points black
clear_board
play b E5
50 final_score
#? [B\+74(\.0)?]

51 final_status_list dead
#? []

52 gogui-ownership
#? [.*]

53 gogui-visits b
#? [.*]

60 genmove w
#? [[A-HJ][1-9]|PASS|pass|resign]
