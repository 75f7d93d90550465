using UnityEngine;

public class ZombieAI : MonoBehaviour
{
    public float speed = 1.5f;
}
